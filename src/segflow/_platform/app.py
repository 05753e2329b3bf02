"""`tf.compat.v1.app.run`: TF1's entry point, absl's `app.run` with TF's flag parsing.

    FLAGS = sf.compat.v1.flags.FLAGS
    sf.compat.v1.flags.DEFINE_integer("steps", 10, "training steps")

    def main(argv):            # argv: the program name and what the flags left over
        ...

    if __name__ == "__main__":
        sf.compat.v1.app.run()  # parses --steps=..., calls main(argv), exits with what main returned

As in TF, unknown flags are not an error: they stay in the argv that `main` gets. absl is imported
when `run` is called.
"""
import sys as _sys

from segflow._platform.flags import FLAGS

__all__ = ["run"]


def _parse_flags_tolerate_undef(argv):
    """Parses the flags in `argv` (default: sys.argv); returns the arguments left, unknown flags included."""
    return FLAGS(_sys.argv if argv is None else argv, known_only=True)


def run(main=None, argv=None):
    """Parses the flags in `argv` (default `sys.argv`), then runs `sys.exit(main(argv_left))`.

    Args:
      main: the function to run, taking the remaining argv; default: `main` of the `__main__` module.
      argv: the command line (its first item is the program name); default `sys.argv`.
    Raises:
      SystemExit: always, with `main`'s return value (absl's behaviour); a bad flag value prints
        the usage and exits with status 1.
    """
    import absl.app
    main = main or _sys.modules["__main__"].main
    absl.app.run(main=main, argv=argv, flags_parser=_parse_flags_tolerate_undef)
