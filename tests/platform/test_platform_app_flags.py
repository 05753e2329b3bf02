"""compat.v1.app.run and compat.v1.flags (absl's, loaded on first use): each program runs in a
fresh interpreter, as a script, so that sys.argv, __main__ and the exit status are its own."""
import json
import subprocess
import sys
import textwrap

import segflow as sf

PROGRAM = textwrap.dedent("""
    import json, sys
    import segflow as sf
    v1 = sf.compat.v1
    v1.flags.FLAGS, v1.flags.DEFINE_string, v1.app.run, v1.logging.info, sf.get_logger
    loaded_at_import = "absl" in sys.modules        # the faces alone load no absl
    flags = sf.compat.v1.flags
    flags.DEFINE_integer("x", 1, "an int")
    flags.DEFINE_string("name", "a", "a string")
    flags.DEFINE_float("rate", 0.5, "a float")
    flags.DEFINE_boolean("fast", False, "a bool")
    flags.DEFINE_list("items", [], "a list")
    flags.DEFINE_enum("color", "red", ["red", "blue"], "an enum")
    flags.DEFINE_multi_string("tag", [], "repeatable")
    flags.DEFINE_string(flag_name="old", default_value="d", docstring="TF1's keyword names")
    FLAGS = sf.compat.v1.app.flags.FLAGS

    def main(argv):
        print(json.dumps({"argv": argv[1:], "x": FLAGS.x, "name": FLAGS.name, "rate": FLAGS.rate,
                          "fast": FLAGS.fast, "items": FLAGS.items, "color": FLAGS.color, "tag": FLAGS.tag,
                          "old": FLAGS.old, "loaded_at_import": loaded_at_import,
                          "is_flag_values": isinstance(FLAGS, flags.FlagValues),
                          "same_flags": sf.compat.v1.app.flags is flags,
                          "absl_flags": FLAGS["x"].value == __import__("absl.flags").flags.FLAGS.x}))
        return 3

    if __name__ == "__main__":
        sf.compat.v1.app.run()      # main: __main__.main; argv: sys.argv
""")


def _run(tmp_path, program, *args):
    path = tmp_path / "prog.py"
    path.write_text(program)
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=120)


def test_app_run_parses_flags_and_exits_with_mains_value(tmp_path):
    r = _run(tmp_path, PROGRAM, "--x=3", "--name=b", "--rate=0.25", "--fast", "--items=p,q", "--color=blue",
             "--tag=t1", "--tag=t2", "--old=new", "extra", "--unknown=5")
    assert r.returncode == 3, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["argv"] == ["extra", "--unknown=5"]     # what the flags left, unknown flags included (TF)
    assert (got["x"], got["name"], got["rate"], got["fast"]) == (3, "b", 0.25, True)
    assert (got["items"], got["color"], got["tag"], got["old"]) == (["p", "q"], "blue", ["t1", "t2"], "new")
    assert not got["loaded_at_import"] and got["is_flag_values"] and got["same_flags"] and got["absl_flags"]


def test_app_run_defaults_and_a_bad_flag_value(tmp_path):
    r = _run(tmp_path, PROGRAM)
    assert r.returncode == 3, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert (got["argv"], got["x"], got["fast"], got["color"], got["old"]) == ([], 1, False, "red", "d")
    r = _run(tmp_path, PROGRAM, "--x=abc", "--color=green")
    assert r.returncode == 1 and "--x" in r.stderr and "abc" in r.stderr and not r.stdout


def test_flags_read_before_parsing_parse_sys_argv(tmp_path):
    program = textwrap.dedent("""
        import sys
        import segflow as sf
        flags = sf.compat.v1.flags
        flags.DEFINE_integer("y", 7, "an int")
        print(flags.FLAGS.y, flags.FLAGS.is_parsed())
        sf.compat.v1.app.run(main=lambda argv: print("main", argv[1:]) or None, argv=["prog", "--y=1", "z"])
    """)
    r = _run(tmp_path, program, "--y=9")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["9 True", "main ['z']"]


def test_absl_names_pass_through():
    import absl.flags
    flags = sf.compat.v1.flags
    assert flags.FlagValues is absl.flags.FlagValues and flags.DEFINE_alias is absl.flags.DEFINE_alias
    assert flags.IllegalFlagValueError is absl.flags.IllegalFlagValueError
    assert not hasattr(flags, "no_such_absl_name")
    assert not hasattr(sf, "app") and not hasattr(sf, "flags")        # TF2: only under compat.v1
