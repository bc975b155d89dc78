"""The commands as a user types them, for the tests that drive llac from the outside."""
import subprocess
import sys


def llac(workdir, script):
    """`llac -c script` in `workdir`: (exit status, stdout, stderr); never a traceback."""
    done = subprocess.run([sys.executable, "-m", "llac", "-c", script], cwd=workdir, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout, done.stderr
