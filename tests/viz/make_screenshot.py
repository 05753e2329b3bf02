"""Regenerates docs/img/viz_graph.png: headless Chromium's screenshot of sf.viz.to_html for a small
model with gradients (an embedding lookup, whose gradient is an IndexedSlices).

    PYTHONPATH=src python tests/viz/make_screenshot.py
"""
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import segflow as sf  # noqa: E402

from chromium import find_or_install, run  # noqa: E402
from vizhelp import build_model  # noqa: E402


def main(out=HERE.parents[1] / "docs" / "img" / "viz_graph.png"):
    exe, note = find_or_install()
    if exe is None:
        raise SystemExit(note)
    g, _, _ = build_model()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        page = pathlib.Path(tmp) / "graph.html"
        sf.viz.save_html(str(page), g, title="embedding lookup, matmul, loss and its gradients")
        _, console, _ = run(exe, page, f"--screenshot={out}", "--window-size=1500,1040",
                            "--force-device-scale-factor=1.5")
    if console:
        raise SystemExit("the page logged: " + "\n".join(console))
    print(f"wrote {out} ({note})")


if __name__ == "__main__":
    main()
