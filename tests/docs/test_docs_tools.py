"""The committed scripts that produce docs/ still run and produce what they claim."""

import pathlib
import subprocess
import sys

import peers  # noqa: E402  (tests/peers.py, put on sys.path by conftest)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_plot_distributions_writes_every_picture(tmp_path):
    peers.module("matplotlib")
    proc = subprocess.run(
        [sys.executable, "-P", str(ROOT / "tools" / "plot_distributions.py"),
         "--out", str(tmp_path), "--n", "20000"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    pictures = sorted(p.name for p in tmp_path.glob("*.png"))
    listed = sorted(line.split("(img/")[1].rstrip(") |") for line in proc.stdout.splitlines()
                    if "(img/" in line)
    assert pictures == listed
    assert len(pictures) == 7
    for p in tmp_path.glob("*.png"):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The committed page lists the same pictures.
    page = (ROOT / "docs" / "distributions.md").read_text()
    for name in pictures:
        assert f"img/{name}" in page


def test_demo_checks_pass():
    """The README's main job: every correctness check of `ascend-rand demo` passes."""
    proc = subprocess.run(
        [sys.executable, "-P", "-c", "import sys; from ascend_rand.cli import main; "
         "sys.exit(main(['demo', '--no-bench']))"],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "checks passed" in proc.stdout
    for check in ("Random123 KAT 3", "native == numpy", "dropout mask", "MT19937 jump", "normal"):
        assert check in proc.stdout

