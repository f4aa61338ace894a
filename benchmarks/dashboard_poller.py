"""What an open dashboard costs the server: a thread that makes the admin calls the page at
/__mishap/ui/ makes while it is visible (see Sources/MishapService/Dashboard/app.js), at the
page's own interval, on keep-alive connections like a browser's. bench.py runs wrk with and
without it; with no page open, no such call is made and the dashboard costs nothing at all."""

import http.client
import json
import threading

# The page polls the journal for new entries (`after` the last id it has) every second, and
# `health` every fifth round (its Requests tab, the one it opens on, needs nothing more).
INTERVAL_SECONDS = 1.0
HEALTH_EVERY = 5
PAGE = 100  # the most new entries one poll fetches (without their bodies), as the page asks


class DashboardPoller:
    """Polls like an open page until stopped; counts its calls and the entries it fetched. With
    no port it does nothing (a closed page), so both cases run the same code around wrk."""

    def __init__(self, port):
        self.port = port
        self.calls = 0
        self.entries = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        if self.port is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self.port is not None:
            self._thread.join(timeout=10)

    def _get(self, connection: http.client.HTTPConnection, path: str) -> bytes:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            raise RuntimeError(f"dashboard poll {path}: {response.status} {body[:200]!r}")
        self.calls += 1
        return body

    def _run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        last, rounds = 0, 0
        while not self._stop.is_set():
            if rounds % HEALTH_EVERY == 0:
                self._get(connection, "/__mishap/health")
            rounds += 1
            fetched = json.loads(self._get(connection, f"/__mishap/requests?after={last}&limit={PAGE}&bodyBytes=0"))["requests"]
            if fetched:
                last = fetched[-1]["id"]
                self.entries += len(fetched)
            self._stop.wait(INTERVAL_SECONDS)
        connection.close()
