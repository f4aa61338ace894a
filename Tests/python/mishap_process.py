"""A `mishap serve` started for the tests of a class, on a free port.

Every suite here drives the real binary (`MISHAP_BIN`, or the debug build) over real sockets.
It starts with `--port 0`, reads the first line (`listening on http://HOST:PORT`) for the
address, and keeps reading standard output on a thread so that the server never blocks on a
full pipe.
"""

import os
import re
import subprocess
import threading
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISHAP = os.environ.get("MISHAP_BIN", os.path.join(REPO, ".build", "debug", "mishap"))
DEFAULT_SCENARIOS = os.path.join(REPO, "scenarios")


class MishapProcess:
    """`mishap serve --port 0 --scenarios FOLDER --log-level warning` and any `extra` flags."""

    def __init__(self, scenarios=DEFAULT_SCENARIOS, *extra):
        self.process = subprocess.Popen(
            [MISHAP, "serve", "--port", "0", "--scenarios", scenarios, "--log-level", "warning", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if not match:
            self.process.kill()
            self.process.wait(timeout=15)
            raise RuntimeError(f"mishap did not start: {line!r}")
        self.url = match.group(1)
        parts = urllib.parse.urlsplit(self.url)
        self.host, self.port = parts.hostname, parts.port
        self.address = parts.netloc
        self.reader = threading.Thread(target=self.process.stdout.read, daemon=True)
        self.reader.start()

    def stop(self):
        """Stops the server (SIGTERM) and waits for it and its reader."""
        self.process.terminate()
        self.process.wait(timeout=15)
        self.reader.join(timeout=5)
        self.process.stdout.close()
