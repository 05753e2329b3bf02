"""Finding (or installing) headless Chromium and loading a page in it, for the viz tests and the
screenshot script.

`find_or_install()` looks for a Chromium/Chrome binary ($SEGFLOW_CHROMIUM, then chromium,
chromium-browser, google-chrome, ...); when there is none and we are root with apt-get, it installs
Debian's `chromium` package (about 75 s on a fresh machine) and reports how long that took.
"""
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "headless_shell")

_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
          "--disable-extensions", "--hide-scrollbars", "--mute-audio")


def find():
    given = os.environ.get("SEGFLOW_CHROMIUM")
    if given:
        return shutil.which(given) or (given if os.access(given, os.X_OK) else None)
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def find_or_install():
    """(path or None, a note: how it was found or installed, or why it could not be)."""
    exe = find()
    if exe is not None:
        return exe, f"using {exe}"
    if shutil.which("apt-get") is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, ("headless Chromium is not installed and cannot be installed here (that needs root "
                      "and apt-get): install Debian's `chromium` package, or set SEGFLOW_CHROMIUM to a "
                      "Chromium or Chrome binary")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    start = time.monotonic()
    cmd = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]   # recommends: fonts, desktop bits
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    if done.returncode != 0:       # a fresh machine may have no package lists yet
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=600)
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    took = time.monotonic() - start
    exe = find()
    if exe is None:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return None, (f"headless Chromium could not be installed with apt-get ({took:.0f} s): "
                      + " | ".join(tail))
    return exe, f"installed Debian's chromium package in {took:.0f} s"


def run(exe, page, *flags, timeout=90):
    """Loads `page` (a path) headless with extra `flags`; returns (stdout, console lines, stderr).

    Console lines are what the page logged or threw (Chromium logs each as `...:CONSOLE:...`
    on stderr with --enable-logging=stderr; it does not say which were errors, so a page meant to
    log nothing must yield none).
    """
    uri = pathlib.Path(page).resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix="sfviz-chromium-") as profile:
        cmd = [exe, *_FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *flags, uri]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    if done.returncode != 0:
        raise RuntimeError(f"chromium exited with {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout, console, done.stderr
