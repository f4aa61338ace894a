"""Streams under a session's network profile, from real clients: Server-Sent Events read with
http.client (paced by the bandwidth, a latency between pieces, a reset after N bytes of the
stream, a slow close), WebSocket frames with the `websockets` package and a raw socket (a
latency per message, the bandwidth, a reset after N bytes of frames: 1006, loss before the
upgrade), range answers paced by the bandwidth (and the earlier of a rule's cut and the
profile's reset winning), and a profile's reset giving a slow reader exactly N bytes.

Time bounds are lower bounds only: the server cannot be faster than the profile.

Run by `make test`:  python3 -m unittest discover -s Tests/python -v   (MISHAP_BIN: another binary)
"""

import asyncio
import base64
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request
import uuid

try:
    import websockets
    from websockets.exceptions import ConnectionClosedError
except ImportError:  # pragma: no cover - make python-test-deps installs it
    websockets = None

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MISHAP = os.environ.get("MISHAP_BIN", os.path.join(REPO, ".build", "debug", "mishap"))

KILO = "x" * 990
SCENARIO = f"""
endpoints:
  - endpoint: GET /ten
    rules:
      - name: ten
        respond:
          events:
{chr(10).join(f'            - {{ id: {n}, data: "{KILO}" }}' for n in range(10))}
  - endpoint: GET /ticks
    rules:
      - name: ticks
        respond:
          events:
            - {{ id: 1, data: one }}
            - {{ id: 2, data: two, delay: 100ms }}
            - {{ id: 3, data: three, delay: 100ms }}
            - {{ id: 4, data: four, delay: 1s }}
  - endpoint: GET /one
    rules:
      - {{ name: one, respond: {{ events: [ {{ id: 1, data: only }} ] }} }}
  - endpoint: GET /socket
    rules:
      - name: socket
        respond:
          websocket:
            send: [ {{ text: hello }} ]
            replies: [ {{ when: {{ text: ping }}, send: {{ text: pong }} }} ]
  - endpoint: GET /many
    rules:
      - name: many
        respond:
          websocket:
            send:
{chr(10).join('              - { base64: "' + base64.b64encode(bytes([n]) * 200).decode() + '" }' for n in range(10))}
  - endpoint: GET /big-message
    rules:
      - name: big
        respond:
          websocket:
            send: [ {{ base64: "{base64.b64encode(bytes(20000)).decode()}" }} ]
            end: {{ close: 4000, reason: done, after: 100ms }}
  - endpoint: GET /report.bin
    rules:
      - name: dies
        when: {{ query: {{ cut: "yes" }} }}
        respond: {{ file: report.bin, ranges: {{ resetAfterBytes: 8000 }} }}
      - name: whole
        respond: {{ file: report.bin, ranges: true }}
  - endpoint: GET /big.bin
    rules:
      - {{ name: big, respond: {{ file: big.bin }} }}
"""

REPORT = bytes(i % 251 for i in range(20000))


class StreamNetworkTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="mishap-stream-network-")
        with open(os.path.join(cls.folder, "streams.yaml"), "w") as file:
            file.write(SCENARIO)
        with open(os.path.join(cls.folder, "report.bin"), "wb") as file:
            file.write(REPORT)
        with open(os.path.join(cls.folder, "big.bin"), "wb") as file:
            file.write(bytes(i % 253 for i in range(3_000_000)))
        cls.process = subprocess.Popen(
            [MISHAP, "serve", "--port", "0", "--scenarios", cls.folder, "--log-level", "warning"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = cls.process.stdout.readline()
        match = re.search(r"listening on http://(\S+)", line)
        if not match:
            cls.process.kill()
            raise RuntimeError(f"mishap did not start: {line!r}")
        cls.address = match.group(1)
        cls.host, cls.port = cls.address.rsplit(":", 1)
        cls.port = int(cls.port)
        cls.url = "http://" + cls.address
        cls.reader = threading.Thread(target=cls.process.stdout.read, daemon=True)
        cls.reader.start()

    @classmethod
    def tearDownClass(cls):
        cls.process.terminate()
        cls.process.wait(timeout=15)
        cls.reader.join(timeout=5)
        cls.process.stdout.close()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def session(self, profile):
        """A new session on `profile`."""
        session = "s-" + uuid.uuid4().hex[:10]
        request = urllib.request.Request(f"{self.url}/__mishap/network?session={session}", method="PUT",
                                         data=json.dumps(profile).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            self.assertEqual(response.status, 200)
        return session

    def journal(self, session):
        with urllib.request.urlopen(f"{self.url}/__mishap/requests?session={session}", timeout=10) as response:
            return json.load(response)

    def read_stream(self, path, session, headers=None):
        """Reads an event stream with http.client: the (seconds since the request, bytes)
        pieces as they came, and the error that ended it (None: a clean end)."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        start = time.monotonic()
        connection.request("GET", path, headers={"X-Mishap-Session": session, **(headers or {})})
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        pieces, error = [], None
        try:
            while True:
                piece = response.read1(65536)
                if not piece:
                    break
                pieces.append((time.monotonic() - start, piece))
        except (ConnectionError, http.client.IncompleteRead, OSError) as caught:
            error = caught
        connection.close()
        return pieces, error, time.monotonic() - start

    @staticmethod
    def event_times(pieces):
        """When each event's blank line arrived, in order, with its id."""
        seen, buffer, times = b"", b"", []
        for at, piece in pieces:
            buffer += piece
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                match = re.search(rb"^id: (\S+)$", event, re.M)
                times.append((match.group(1).decode() if match else None, at))
        return times

    # Server-Sent Events

    def test_event_stream_is_paced_by_the_bandwidth(self):
        session = self.session({"bandwidth": {"down": "2kB/s"}})
        pieces, error, took = self.read_stream("/ten", session)
        self.assertIsNone(error)
        body = b"".join(piece for _, piece in pieces)
        self.assertEqual(body.count(KILO.encode()), 10)
        self.assertEqual([event for event, _ in self.event_times(pieces)], [str(n) for n in range(10)])
        # About 10,100 bytes at 2,000 bytes a second: 5 s; the first piece goes at once.
        self.assertGreaterEqual(took, 4.0)
        entry = self.journal(session)["requests"][0]
        self.assertEqual(entry["network"]["downBytesPerSecond"], 2000)

    def test_event_stream_waits_the_latency_between_pieces_never_early_nor_reordered(self):
        session = self.session({"latency": "300ms", "latencyPerChunk": True})
        pieces, error, took = self.read_stream("/ticks", session)
        self.assertIsNone(error)
        times = self.event_times(pieces)
        self.assertEqual([event for event, _ in times], ["1", "2", "3", "4"])
        # The head waits 300 ms, and each event is sent at least 300 ms after the one before
        # (the declared 100 ms gaps become 300 ms): event k comes at least 0.3 + 0.3 k s after
        # the request (measured from the request, so a late reader only adds). And never earlier
        # than declared: 0, 100, 200 and 1,200 ms after the head.
        for k, ((_, at), declared) in enumerate(zip(times, [0, 0.1, 0.2, 1.2])):
            self.assertGreaterEqual(at, 0.3 + 0.3 * k - 0.02, f"event {k + 1}")
            self.assertGreaterEqual(at, 0.3 + declared - 0.02, f"event {k + 1}")

    def test_event_stream_reset_after_bytes_of_the_stream(self):
        session = self.session({"resetAfterBytes": 2500})
        pieces, error, _ = self.read_stream("/ten", session)
        self.assertIsInstance(error, (ConnectionError, http.client.IncompleteRead))
        self.assertEqual(sum(len(piece) for _, piece in pieces), 2500)
        entry = self.journal(session)["requests"][0]
        self.assertEqual(entry["network"]["resetAfterBytes"], 2500)

    def test_event_stream_reset_after_a_fraction_of_its_listed_events(self):
        session = self.session({"resetAfterBytes": "50%"})
        first, _, _ = self.read_stream("/ten", self.session({}))
        total = sum(len(piece) for _, piece in first)
        pieces, error, _ = self.read_stream("/ten", session)
        self.assertIsNotNone(error)
        self.assertEqual(sum(len(piece) for _, piece in pieces), total // 2)

    def test_event_stream_slow_close(self):
        session = self.session({"slowClose": "1500ms"})
        pieces, error, took = self.read_stream("/one", session)
        self.assertIsNone(error)
        self.assertIn(b"data: only", b"".join(piece for _, piece in pieces))
        self.assertGreaterEqual(took, 1.45)  # the event at once, its end 1.5 s later

    def test_event_stream_lost_before_any_byte(self):
        session = self.session({"loss": 1})
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        connection.request("GET", "/ten", headers={"X-Mishap-Session": session})
        with self.assertRaises((ConnectionError, http.client.RemoteDisconnected)):
            connection.getresponse()
        connection.close()

    # WebSocket

    def ws_connect(self, path, session):
        return websockets.connect(f"ws://{self.address}{path}", additional_headers={"X-Mishap-Session": session},
                                  max_size=None)

    def run_async(self, coroutine):
        return asyncio.run(asyncio.wait_for(coroutine, timeout=30))

    @unittest.skipIf(websockets is None, "the websockets package is not installed (make python-test-deps)")
    def test_websocket_messages_wait_the_latency(self):
        session = self.session({"latency": "500ms"})

        async def talk():
            opened = time.monotonic()
            async with self.ws_connect("/socket", session) as ws:
                connected = time.monotonic()
                self.assertEqual(await ws.recv(), "hello")
                hello = time.monotonic()
                asked = time.monotonic()
                await ws.send("ping")
                self.assertEqual(await ws.recv(), "pong")
                return connected - opened, hello - opened, time.monotonic() - asked
        handshake, first, reply = self.run_async(talk())
        self.assertGreaterEqual(handshake, 0.5)
        # Each message crosses the network again: the scripted one (after the 101's 500 ms, 500
        # more) and the reply (500 ms after it was asked).
        self.assertGreaterEqual(first, 1.0)
        self.assertGreaterEqual(reply, 0.5)

    @unittest.skipIf(websockets is None, "the websockets package is not installed (make python-test-deps)")
    def test_websocket_messages_paced_by_the_bandwidth(self):
        session = self.session({"bandwidth": {"down": "5kB/s"}})

        async def talk():
            start = time.monotonic()
            async with self.ws_connect("/big-message", session) as ws:
                message = await ws.recv()
                took = time.monotonic() - start
                with self.assertRaises(websockets.exceptions.ConnectionClosed) as closed:
                    await ws.recv()
                return message, took, closed.exception
        message, took, closed = self.run_async(talk())
        self.assertEqual(message, bytes(20000))
        self.assertGreaterEqual(took, 3.0)  # 20,004 bytes at 5,000 a second: 4 s
        self.assertEqual(closed.rcvd.code, 4000)

    @unittest.skipIf(websockets is None, "the websockets package is not installed (make python-test-deps)")
    def test_websocket_reset_after_bytes_is_1006(self):
        session = self.session({"resetAfterBytes": 1000})

        async def talk():
            got = []
            async with self.ws_connect("/many", session) as ws:
                with self.assertRaises(ConnectionClosedError) as closed:
                    while True:
                        got.append(await ws.recv())
                return got, closed.exception
        got, closed = self.run_async(talk())
        # Frames of 204 bytes: four whole ones in 1,000 bytes, the fifth cut.
        self.assertEqual(got, [bytes([n]) * 200 for n in range(4)])
        self.assertIsNone(closed.rcvd)  # no close frame: websockets reports 1006

    def raw_upgrade(self, path, session, receive_buffer=None):
        """A raw WebSocket handshake; returns the socket and what came after the 101's head."""
        raw = socket.socket()
        if receive_buffer:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        raw.settimeout(10)
        raw.connect((self.host, self.port))
        raw.sendall((f"GET {path} HTTP/1.1\r\nHost: {self.address}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                     f"X-Mishap-Session: {session}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            try:
                piece = raw.recv(4096)
            except ConnectionResetError:
                break
            if not piece:
                break
            head += piece
        return raw, head

    @staticmethod
    def read_until_broken(raw, pause=0.0):
        """Everything until the connection ends, and whether it ended by a reset."""
        got, reset = b"", False
        while True:
            try:
                piece = raw.recv(4096)
            except ConnectionResetError:
                reset = True
                break
            if not piece:
                break
            got += piece
            if pause:
                time.sleep(pause)
        return got, reset

    def test_websocket_reset_after_bytes_exact_on_a_raw_socket(self):
        session = self.session({"resetAfterBytes": 1000})
        raw, head = self.raw_upgrade("/many", session)
        self.assertTrue(head.startswith(b"HTTP/1.1 101"), head)
        rest = head.split(b"\r\n\r\n", 1)[1]
        got, reset = self.read_until_broken(raw)
        raw.close()
        self.assertEqual(len(rest + got), 1000)
        self.assertTrue(reset)

    def test_websocket_lost_before_the_upgrade(self):
        session = self.session({"loss": 1})
        raw, head = self.raw_upgrade("/socket", session)
        raw.close()
        self.assertEqual(head, b"")  # a reset (or a close) before any byte: no 101
        entry = self.journal(session)["requests"][0]
        self.assertEqual(entry["network"]["reset"], "loss")

    # Range answers

    def get_range(self, session, path, first, last, pause=0.0):
        raw = socket.create_connection((self.host, self.port), timeout=30)
        start = time.monotonic()
        raw.sendall((f"GET {path} HTTP/1.1\r\nHost: {self.address}\r\nRange: bytes={first}-{last}\r\n"
                     f"X-Mishap-Session: {session}\r\nConnection: close\r\n\r\n").encode())
        got, reset = self.read_until_broken(raw, pause)
        raw.close()
        head, _, body = got.partition(b"\r\n\r\n")
        return head, body, reset, time.monotonic() - start

    def test_range_answer_paced_by_the_bandwidth(self):
        session = self.session({"bandwidth": {"down": "4kB/s"}})
        head, body, reset, took = self.get_range(session, "/report.bin", 0, 9999)
        self.assertTrue(head.startswith(b"HTTP/1.1 206"), head)
        self.assertEqual(body, REPORT[:10000])
        self.assertFalse(reset)
        self.assertGreaterEqual(took, 2.0)  # 10,000 bytes at 4,000 a second: 2.5 s

    def test_range_cut_paced_by_the_bandwidth(self):
        session = self.session({"bandwidth": {"down": "4kB/s"}})
        head, body, reset, took = self.get_range(session, "/report.bin?cut=yes", 0, 19999)
        self.assertTrue(head.startswith(b"HTTP/1.1 206"), head)
        self.assertEqual(body, REPORT[:8000])
        self.assertTrue(reset)
        self.assertGreaterEqual(took, 1.5)  # 8,000 bytes at 4,000 a second: 2 s

    def test_range_cut_and_profile_reset_the_earlier_wins(self):
        earlier_profile = self.session({"resetAfterBytes": 3000})
        _, body, reset, _ = self.get_range(earlier_profile, "/report.bin?cut=yes", 0, 19999)
        self.assertEqual((len(body), reset), (3000, True))
        earlier_rule = self.session({"resetAfterBytes": 12000, "bandwidth": {"down": "50kB/s"}})
        _, body, reset, _ = self.get_range(earlier_rule, "/report.bin?cut=yes", 0, 19999)
        self.assertEqual((body, reset), (REPORT[:8000], True))

    # A profile's reset and a slow reader

    def test_profile_reset_gives_a_slow_reader_exactly_its_bytes(self):
        # A reader with a 4 KiB receive buffer that waits 0.5 s, then reads a receive every 4 ms
        # (over 2 s for the bytes the server's socket still holds at the reset): before the
        # server waited for it, it got 6,144 bytes of 2,500,000.
        session = self.session({"resetAfterBytes": 2_500_000})
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.settimeout(30)
        raw.connect((self.host, self.port))
        raw.sendall((f"GET /big.bin HTTP/1.1\r\nHost: {self.address}\r\nX-Mishap-Session: {session}\r\n"
                     "Connection: close\r\n\r\n").encode())
        time.sleep(0.5)
        got, reset = b"", False
        while True:
            try:
                piece = raw.recv(65536)
            except ConnectionResetError:
                reset = True
                break
            if not piece:
                break
            got += piece
            time.sleep(0.004)
        raw.close()
        _, _, body = got.partition(b"\r\n\r\n")
        self.assertTrue(reset)
        self.assertEqual(len(body), 2_500_000)


if __name__ == "__main__":
    unittest.main()
