"""Resumable downloads (docs/downloads.md) from Python's standard library (http.client, no packages).

One `mishap serve` for the class, on a scenarios folder of its own with a 200 kB file. A small
resuming client (what a download manager does: on a broken connection, ask for the rest with
`Range` and `If-Range`; a 200 starts over, a 416 starts over without `Range`) downloads it
through each fault, and the bytes it puts together must be the file's, exactly. Also: a rule
added at runtime for one session, a rule forced with X-Mishap-Rule, and the journal's ranges.

Run by `make test`:  python3 -m unittest discover -s Tests/python -v   (MISHAP_BIN: another binary)
"""

import base64
import http.client
import json
import os
import re
import shutil
import tempfile
import time
import unittest
import urllib.parse
import uuid

from mishap_process import MishapProcess

DATA = bytes((i * 7 + i // 251) % 256 for i in range(200_000))

# Each endpoint: the first download (no Range) dies; the resume (with Range) answers as its
# rule says.
SCENARIO = """\
endpoints:
  - endpoint: GET /reset
    rules:
      - name: dies
        when: { headers: { Range: { absent: true } } }
        respond: { file: data.bin, ranges: { resetAfterBytes: 80000 } }
      - name: resumes
        respond: { file: data.bin, ranges: true }
  - endpoint: GET /close
    rules:
      - name: dies
        when: { headers: { Range: { absent: true } } }
        respond: { file: data.bin, ranges: { closeAfterBytes: 25% } }
      - name: resumes
        respond: { file: data.bin, ranges: true }
  - endpoint: GET /ignore-range
    rules:
      - name: dies
        when: { headers: { Range: { absent: true } } }
        respond: { file: data.bin, ranges: { resetAfterBytes: 80000 } }
      - name: ignores
        respond: { file: data.bin, ranges: { fault: ignore-range } }
  - endpoint: GET /unsatisfiable
    rules:
      - name: dies
        when: { headers: { Range: { absent: true } } }
        respond: { file: data.bin, ranges: { resetAfterBytes: 80000 } }
      - name: refuses
        respond: { file: data.bin, ranges: { fault: unsatisfiable } }
  - endpoint: GET /changed-etag
    rules:
      - name: dies
        when: { headers: { Range: { absent: true } } }
        respond: { file: data.bin, ranges: { resetAfterBytes: 80000 } }
      - name: changed
        respond: { file: data.bin, ranges: { fault: changed-etag } }
  - endpoint: GET /slow-reader
    rules:
      - name: dies late
        respond: { file: big.bin, ranges: { resetAfterBytes: 1500000 } }
  - endpoint: GET /plain
    rules:
      - name: whole
        respond: { file: data.bin, ranges: true }
"""


def fetch(url, path, headers=None):
    """One GET: (status, headers, the body bytes received, how it ended: 'complete', 'reset' or
    'closed' (EOF before Content-Length))."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        length = int(response.headers.get("Content-Length", "0"))
        received = bytearray()
        end = "complete"
        try:
            while True:
                # read1: one receive at most. read(n) can take several, and a reset on a later
                # one throws away the bytes of the earlier ones.
                piece = response.read1(65536)
                if not piece:
                    break
                received += piece
        except ConnectionResetError:
            end = "reset"
        except http.client.IncompleteRead as error:
            received += error.partial
            end = "closed"
        if end == "complete" and len(received) < length:
            end = "closed"
        return response.status, response.headers, bytes(received), end
    finally:
        connection.close()


def download(url, path, headers=None, attempts=4):
    """A resuming client: (the bytes put together, the statuses and ends of each attempt)."""
    data, etag, steps = b"", None, []
    for _ in range(attempts):
        asked = dict(headers or {})
        if data and etag:
            asked.update({"Range": f"bytes={len(data)}-", "If-Range": etag})
        status, answer, body, end = fetch(url, path, asked)
        steps.append((status, end))
        if status == 206:
            match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", answer["Content-Range"] or "")
            if not match or int(match.group(1)) != len(data):
                data = b""  # A part that does not follow: start over.
                continue
            data += body
            total = int(match.group(3))
        elif status == 200:
            data, total = body, int(answer["Content-Length"])  # The whole body: start over from it.
        elif status == 416:
            data, etag = b"", None  # The server refuses the part: start over without Range.
            continue
        else:
            raise AssertionError(f"unexpected status {status}")
        etag = answer["ETag"]
        if end == "complete" and len(data) == total:
            return data, steps
    return data, steps


class RangesFromPython(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="mishap-ranges-")
        with open(os.path.join(cls.folder, "data.bin"), "wb") as file:
            file.write(DATA)
        with open(os.path.join(cls.folder, "big.bin"), "wb") as file:
            file.write(DATA * 10)
        with open(os.path.join(cls.folder, "downloads.yaml"), "w") as file:
            file.write(SCENARIO)
        cls.mishap = MishapProcess(cls.folder)
        cls.url = cls.mishap.url

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def admin(self, method, path, body=None, **query):
        parts = urllib.parse.urlsplit(self.url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        try:
            target = "/__mishap/" + path + ("?" + urllib.parse.urlencode(query) if query else "")
            connection.request(method, target, body=body)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    def test_the_download_dies_at_byte_n_and_resumes(self):
        status, headers, body, end = fetch(self.url, "/reset")
        self.assertEqual((status, end, len(body)), (200, "reset", 80_000))
        self.assertEqual(headers["Content-Length"], "200000")
        self.assertEqual(headers["Accept-Ranges"], "bytes")
        status, rest_headers, rest, end = fetch(self.url, "/reset",
                                                {"Range": "bytes=80000-", "If-Range": headers["ETag"]})
        self.assertEqual((status, end), (206, "complete"))
        self.assertEqual(rest_headers["Content-Range"], "bytes 80000-199999/200000")
        self.assertEqual(body + rest, DATA)

    def test_a_slow_reader_still_gets_every_byte_before_the_reset(self):
        # The server waits for the client to take the bytes before it resets: a reset throws
        # away what the socket still holds (RangeCutBody).
        parts = urllib.parse.urlsplit(self.url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        connection.request("GET", "/slow-reader")
        response = connection.getresponse()
        time.sleep(0.5)
        received = bytearray()
        with self.assertRaises(ConnectionResetError):
            while piece := response.read1(65536):
                received += piece
        connection.close()
        self.assertEqual(len(received), 1_500_000)
        self.assertEqual(bytes(received), (DATA * 10)[:1_500_000])

    def test_what_a_plain_read_surfaces(self):
        # response.read() of a download that dies: the reset is an error of its own, the close an
        # IncompleteRead holding the bytes that came.
        parts = urllib.parse.urlsplit(self.url)
        surfaced = {}
        for path in ("/reset", "/close"):
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
            connection.request("GET", path)
            try:
                connection.getresponse().read()
            except (ConnectionResetError, http.client.IncompleteRead) as error:
                surfaced[path] = (type(error).__name__, len(error.partial) if hasattr(error, "partial") else None)
            finally:
                connection.close()
        self.assertEqual(surfaced, {"/reset": ("ConnectionResetError", None), "/close": ("IncompleteRead", 50_000)})

    def test_a_resuming_client_through_each_fault(self):
        expected = {
            "/reset": [(200, "reset"), (206, "complete")],
            "/close": [(200, "closed"), (206, "complete")],
            # Ignoring Range: the whole body again, from the start.
            "/ignore-range": [(200, "reset"), (200, "complete")],
            # 416: the client starts over without Range, and dies again at the same byte.
            "/unsatisfiable": [(200, "reset"), (416, "complete"), (200, "reset"), (416, "complete")],
            # Another ETag: If-Range fails, the whole body comes back.
            "/changed-etag": [(200, "reset"), (200, "complete")],
        }
        for path, steps in expected.items():
            with self.subTest(path=path):
                data, seen = download(self.url, path)
                self.assertEqual(seen, steps)
                if path != "/unsatisfiable":
                    self.assertEqual(data, DATA)

    def test_the_changed_etag_is_sent(self):
        _, headers, _, _ = fetch(self.url, "/plain")
        status, changed, _, _ = fetch(self.url, "/changed-etag", {"Range": "bytes=5-", "If-Range": headers["ETag"]})
        self.assertEqual(status, 200)
        self.assertEqual(changed["ETag"], headers["ETag"][:-1] + '-changed"')

    def test_a_runtime_rule_for_one_session_and_a_forced_rule(self):
        session = "py-" + uuid.uuid4().hex[:12]
        encoded = base64.b64encode(DATA).decode()
        rule = ("endpoint: GET /plain\nrules:\n  - name: cut\n"
                f"    respond: {{ base64: \"{encoded}\", ranges: {{ resetAfterBytes: 1000 }} }}\n")
        status, added = self.admin("POST", "rules", rule, session=session, times=1)
        self.assertEqual(status, 201, added)
        data, steps = download(self.url, "/plain", {"X-Mishap-Session": session})
        self.assertEqual(steps, [(200, "reset"), (206, "complete")])
        self.assertEqual(data, DATA, "the base64 body's ETag is the file's: the same bytes")
        # X-Mishap-Rule forces the dying rule on a resume: the part is cut too, at its 80,000th byte.
        status, _, body, end = fetch(self.url, "/reset", {"Range": "bytes=100000-", "X-Mishap-Rule": "dies"})
        self.assertEqual((status, end, body), (206, "reset", DATA[100_000:180_000]))

    def test_the_journal_shows_the_ranges_asked_and_sent(self):
        session = "py-" + uuid.uuid4().hex[:12]
        download(self.url, "/reset", {"X-Mishap-Session": session})
        status, journal = self.admin("GET", "requests", session=session)
        self.assertEqual(status, 200)
        ranges = [entry["range"] for entry in journal["requests"]]
        self.assertEqual([r["asked"] for r in ranges], [None, "bytes=80000-"])
        self.assertEqual([r["status"] for r in ranges], [200, 206])
        self.assertEqual([r["contentRange"] for r in ranges], [None, "bytes 80000-199999/200000"])
        self.assertEqual(ranges[0]["resetAfterBytes"], 80_000)
        self.assertEqual(ranges[1]["ifRange"], ranges[0]["etag"])


if __name__ == "__main__":
    unittest.main()
