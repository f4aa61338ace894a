"""Server-Sent Events from Python's standard library (http.client, unittest, no packages).

One `mishap serve` for the class, on a scenarios folder written here: a feed that sends two
events (the first with `retry: 300`) and resets, and a rule that answers a reconnection carrying
`Last-Event-ID: 2` with the events after it. The client reads the stream line by line as it
comes, sees the reset, waits the retry it was given and reconnects with the last id; the journal
ties the reconnection to the stream it resumes. Then what each fault looks like to http.client.

Run by `make test`:  python3 -m unittest discover -s Tests/python -v   (MISHAP_BIN: another binary)
"""

import http.client
import json
import os
import tempfile
import time
import unittest
import uuid

from mishap_process import MishapProcess

SCENARIO = """\
endpoints:
  - endpoint: GET /feed
    rules:
      - name: resume
        when: { headers: { Last-Event-ID: "2" } }
        respond:
          events:
            - { id: 3, event: update, data: { n: 3 } }
      - name: fresh
        respond:
          events:
            - { id: 1, data: "one", retry: 300 }
            - { id: 2, data: "two\\nlines", delay: 200ms }
          fault: reset
  - endpoint: GET /close
    rules:
      - name: close
        respond: { events: [ { id: 1, data: one } ], fault: close }
  - endpoint: GET /stall
    rules:
      - name: stall
        respond: { events: [ { id: 1, data: one } ], heartbeat: 50ms, fault: stall }
"""


def parse(lines):
    """Events as an EventSource dispatches them: (id, event, data) per blank line."""
    events, data, event, last_id = [], [], "message", None
    for raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        if line == "":
            if data:
                events.append((last_id, event, "\n".join(data)))
            data, event = [], "message"
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
            elif name == "id":
                last_id = value
    return events, last_id


class EventStreamTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory()
        with open(os.path.join(cls.folder.name, "feed.yaml"), "w") as file:
            file.write(SCENARIO)
        cls.mishap = MishapProcess(cls.folder.name)
        cls.host, cls.port = cls.mishap.host, cls.mishap.port

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()
        cls.folder.cleanup()

    def open(self, path, headers=None):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=5)
        connection.request("GET", path, headers=headers or {})
        return connection, connection.getresponse()

    def read_lines(self, response):
        """Lines until the stream ends: the lines, the time each came, and the error it ended with."""
        lines, times = [], []
        try:
            while True:
                line = response.readline()
                if not line:
                    return lines, times, None
                lines.append(line)
                times.append(time.monotonic())
        except (ConnectionError, http.client.HTTPException, OSError) as error:
            return lines, times, error

    def journal(self, session):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=5)
        try:
            connection.request("GET", f"/__mishap/requests?session={session}")
            return json.load(connection.getresponse())["requests"]
        finally:
            connection.close()

    def test_resume_from_the_id_sent(self):
        session = f"py-{uuid.uuid4().hex[:8]}"
        connection, response = self.open("/feed", {"X-Mishap-Session": session})
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader("Content-Type"), "text/event-stream; charset=utf-8")
        self.assertEqual(response.getheader("Cache-Control"), "no-cache")
        started = time.monotonic()
        lines, times, error = self.read_lines(response)
        self.assertIsInstance(error, ConnectionResetError)
        self.assertEqual(lines, [b"id: 1\n", b"retry: 300\n", b"data: one\n", b"\n",
                                 b"id: 2\n", b"data: two\n", b"data: lines\n", b"\n"])
        self.assertGreaterEqual(times[4] - started, 0.18, "the second event waits its delay")
        events, last_id = parse(lines)
        self.assertEqual(events, [("1", "message", "one"), ("2", "message", "two\nlines")])
        connection.close()
        # As EventSource does: wait the retry given, then reconnect with the last id.
        time.sleep(0.3)
        connection, response = self.open("/feed", {"X-Mishap-Session": session, "Last-Event-ID": last_id})
        lines, _, error = self.read_lines(response)
        connection.close()
        self.assertIsNone(error)
        self.assertEqual(parse(lines)[0], [("3", "update", '{"n":3}')])
        deadline = time.monotonic() + 5
        while True:
            entries = self.journal(session)
            if len(entries) == 2 and entries[1].get("eventStream", {}).get("over"):
                break
            self.assertLess(time.monotonic(), deadline, entries)
            time.sleep(0.05)
        first, second = entries
        self.assertEqual(first["eventStream"], {"events": 2, "over": True, "lastEventId": "2", "retryMs": 300, "ending": "reset"})
        self.assertEqual(second["rule"], "resume")
        self.assertEqual(second["resumesStream"], first["id"])

    def test_a_close_cuts_the_chunked_body(self):
        connection, response = self.open("/close")
        with self.assertRaises(http.client.IncompleteRead) as caught:
            response.read()
        self.assertEqual(caught.exception.partial, b"id: 1\ndata: one\n\n")
        connection.close()

    def test_a_stall_sends_nothing_more(self):
        connection, response = self.open("/stall")
        connection.sock.settimeout(0.6)
        lines = [response.readline() for _ in range(3)]
        self.assertEqual(lines, [b"id: 1\n", b"data: one\n", b"\n"])
        with self.assertRaises(TimeoutError):
            response.readline()
        connection.close()


if __name__ == "__main__":
    unittest.main()
