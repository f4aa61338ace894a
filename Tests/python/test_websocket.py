"""WebSocket scripts and their faults from a real client: the `websockets` package from PyPI
(`make python-test-deps` installs it), and raw sockets for what no client library sends (an
unmasked frame). What each fault surfaces to the client is the test's assertion
(docs/websocket.md, "What clients see").

Run by `make test`:  python3 -m unittest discover -s Tests/python -v   (MISHAP_BIN: another binary)
"""

import asyncio
import base64
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import uuid

try:
    import websockets
    from websockets.exceptions import ConnectionClosed, ConnectionClosedError, InvalidStatus
except ImportError:  # pragma: no cover - make python-test-deps installs it
    websockets = None

from mishap_process import MISHAP, MishapProcess

SCENARIO = """
endpoints:
  - endpoint: GET /chat
    rules:
      - name: refused
        when: { query: { refuse: "yes" } }
        respond: { websocket: { refuse: 403 } }
      - name: chat
        respond:
          websocket:
            send:
              - { text: hello, delay: 100ms }
              - { base64: AAEC }
            replies:
              - { when: { text: ping }, send: { text: pong } }
              - { when: { matches: "^count [0-9]+$" }, send: [ { text: one }, { text: two, delay: 50ms } ] }
              - { when: { json: { type: hi, user.name: { prefix: a } } }, send: { text: "hi there" } }
              - { when: { binary: true }, send: { base64: /w== } }
            end: { close: 4000, reason: bye, after: 1500ms }
  - endpoint: GET /slow
    rules:
      - { name: slow, respond: { delay: 400ms, websocket: { send: [ { text: late } ] } } }
  - endpoint: GET /echo
    rules:
      - name: echo
        respond: { websocket: { replies: [ { when: {}, send: { text: got it } } ] } }
  - endpoint: GET /drop
    rules:
      - { name: drop, respond: { websocket: { send: [ { text: hello } ], end: { drop: true, after: 100ms } } } }
  - endpoint: GET /stall
    rules:
      - { name: stall, respond: { websocket: { end: { stallPings: true, after: 200ms } } } }
  - endpoint: GET /garbage
    rules:
      - { name: garbage, respond: { websocket: { send: [ { text: hello } ], end: { garbage: true } } } }
  - endpoint: GET /oversized
    rules:
      - { name: oversized, respond: { websocket: { send: [ { text: hello } ], end: { oversized: true } } } }
  - endpoint: GET /reset
    rules:
      - { name: reset, respond: { websocket: { send: [ { text: hello } ], end: { reset: true, after: 100ms } } } }
"""


@unittest.skipIf(websockets is None, "the websockets package is not installed (make python-test-deps)")
class WebSocketTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="mishap-ws-")
        with open(os.path.join(cls.folder, "ws.yaml"), "w") as file:
            file.write(SCENARIO)
        cls.mishap = MishapProcess(cls.folder)
        cls.address = cls.mishap.address
        cls.url = "ws://" + cls.address

    @classmethod
    def tearDownClass(cls):
        cls.mishap.stop()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def run_async(self, coroutine):
        return asyncio.run(asyncio.wait_for(coroutine, timeout=20))

    def test_script_replies_and_close_with_code_and_reason(self):
        async def talk():
            async with websockets.connect(self.url + "/chat") as ws:
                self.assertEqual(await ws.recv(), "hello")
                self.assertEqual(await ws.recv(), b"\x00\x01\x02")
                await ws.send("ping")
                self.assertEqual(await ws.recv(), "pong")
                await ws.send("count 3")
                self.assertEqual([await ws.recv(), await ws.recv()], ["one", "two"])
                await ws.send('{"type": "hi", "user": {"name": "alice"}}')
                self.assertEqual(await ws.recv(), "hi there")
                await ws.send('{"type": "hi", "user": {"name": "bob"}}')  # no reply matches
                await ws.send(b"\x01")
                self.assertEqual(await ws.recv(), b"\xff")
                pong = await ws.ping(b"x")
                await asyncio.wait_for(pong, 5)
                with self.assertRaises(ConnectionClosedError) as closed:
                    await ws.recv()
                return closed.exception
        error = self.run_async(talk())
        self.assertEqual(error.rcvd.code, 4000)
        self.assertEqual(error.rcvd.reason, "bye")

    def test_fragmented_message_is_put_together(self):
        async def talk():
            async with websockets.connect(self.url + "/chat") as ws:
                await ws.recv(), await ws.recv()
                await ws.send(["pi", "ng"])  # two frames: a text frame and its continuation
                return await ws.recv()
        self.assertEqual(self.run_async(talk()), "pong")

    def test_client_close_is_answered(self):
        async def talk():
            ws = await websockets.connect(self.url + "/echo")
            await ws.send("anything")
            self.assertEqual(await ws.recv(), "got it")
            await ws.close(code=1000, reason="done")
            return ws
        ws = self.run_async(talk())
        self.assertEqual(ws.close_code, 1000)

    def test_message_too_large_closes_1009(self):
        async def talk():
            async with websockets.connect(self.url + "/echo", max_size=None) as ws:
                await ws.send("x" * ((1 << 20) + 1))
                with self.assertRaises(ConnectionClosedError) as closed:
                    await ws.recv()
                return closed.exception
        self.assertEqual(self.run_async(talk()).rcvd.code, 1009)

    def test_drop_is_1006_for_the_client(self):
        async def talk():
            async with websockets.connect(self.url + "/drop") as ws:
                self.assertEqual(await ws.recv(), "hello")
                with self.assertRaises(ConnectionClosedError) as closed:
                    await ws.recv()
                return closed.exception, ws.close_code
        error, code = self.run_async(talk())
        self.assertIsNone(error.rcvd)  # no close frame: 1006, abnormal closure
        self.assertEqual(code, 1006)

    def test_stall_pings_leaves_a_ping_unanswered(self):
        async def talk():
            async with websockets.connect(self.url + "/stall", ping_interval=None) as ws:
                first = await ws.ping()
                await asyncio.wait_for(first, 5)  # answered before the end
                await asyncio.sleep(0.4)
                late = await ws.ping()
                with self.assertRaises(asyncio.TimeoutError):
                    await asyncio.wait_for(late, 1.5)
        self.run_async(talk())

    def test_garbage_frame_fails_the_client_with_1002(self):
        async def talk():
            async with websockets.connect(self.url + "/garbage") as ws:
                self.assertEqual(await ws.recv(), "hello")
                with self.assertRaises(ConnectionClosedError) as closed:
                    await ws.recv()
                return closed.exception
        error = self.run_async(talk())
        self.assertEqual(error.sent.code, 1002)

    def test_oversized_frame_fails_the_client_with_1009(self):
        async def talk():
            async with websockets.connect(self.url + "/oversized") as ws:
                self.assertEqual(await ws.recv(), "hello")
                with self.assertRaises(ConnectionClosedError) as closed:
                    await ws.recv()
                return closed.exception
        error = self.run_async(talk())
        self.assertEqual(error.sent.code, 1009)

    def test_reset_mid_message(self):
        async def talk():
            async with websockets.connect(self.url + "/reset") as ws:
                self.assertEqual(await ws.recv(), "hello")
                with self.assertRaises(ConnectionClosedError) as closed:
                    await ws.recv()
                return closed.exception, ws.close_code
        error, code = self.run_async(talk())
        self.assertIsNone(error.rcvd)
        self.assertEqual(code, 1006)
        self.assertIsInstance(error.__cause__, (ConnectionResetError, EOFError, OSError))

    def test_refuse_answers_the_status(self):
        async def talk():
            with self.assertRaises(InvalidStatus) as refused:
                await websockets.connect(self.url + "/chat?refuse=yes")
            return refused.exception
        self.assertEqual(self.run_async(talk()).response.status_code, 403)

    def test_forced_rule_refuses(self):
        async def talk():
            with self.assertRaises(InvalidStatus) as refused:
                await websockets.connect(self.url + "/chat", additional_headers={"X-Mishap-Rule": "refused"})
            return refused.exception
        self.assertEqual(self.run_async(talk()).response.status_code, 403)

    def test_mishap_force_refuses_the_next_upgrade_only(self):
        forced = subprocess.run([MISHAP, "force", "GET /chat", "refused", "--times", "1", "--url", f"http://{self.address}"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(forced.returncode, 0, forced.stderr)

        async def talk():
            with self.assertRaises(InvalidStatus) as refused:
                await websockets.connect(self.url + "/chat")
            async with websockets.connect(self.url + "/chat") as ws:
                return refused.exception.response.status_code, await ws.recv()
        self.assertEqual(self.run_async(talk()), (403, "hello"))

    def test_the_journal_records_the_upgrade(self):
        session = "journal-" + uuid.uuid4().hex[:8]

        async def talk():
            async with websockets.connect(self.url + "/echo", additional_headers={"X-Mishap-Session": session}) as ws:
                await ws.send("x")
                await ws.recv()
        self.run_async(talk())
        deadline = time.monotonic() + 5
        while True:
            with urllib.request.urlopen(f"http://{self.address}/__mishap/requests?session={session}", timeout=10) as answer:
                records = json.load(answer)["requests"]
            if records or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        self.assertEqual([(r["path"], r["rule"], r["status"]) for r in records], [("/echo", "echo", 101)])

    def test_plain_get_is_426(self):
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://{self.address}/chat", timeout=10)
        self.assertEqual(refused.exception.code, 426)
        self.assertEqual(refused.exception.headers["Upgrade"], "websocket")

    def handshake(self, version="13"):
        host, port = self.address.rsplit(":", 1)
        connection = socket.create_connection((host, int(port)), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        connection.sendall((f"GET /echo HTTP/1.1\r\nHost: {self.address}\r\nUpgrade: websocket\r\n"
                            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                            f"Sec-WebSocket-Version: {version}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = connection.recv(4096)
            if not chunk:
                break
            head += chunk
        return connection, head

    def test_wrong_version_is_426(self):
        connection, head = self.handshake(version="8")
        connection.close()
        self.assertTrue(head.startswith(b"HTTP/1.1 426"), head)
        self.assertIn(b"Sec-WebSocket-Version: 13", head)

    def test_unmasked_client_frame_is_closed_1002(self):
        connection, head = self.handshake()
        self.assertTrue(head.startswith(b"HTTP/1.1 101"), head)
        connection.sendall(b"\x81\x02hi")  # a text frame without a mask
        frame = connection.recv(2)
        self.assertEqual(frame[0], 0x88)  # close
        payload = connection.recv(frame[1] & 0x7F)
        connection.close()
        self.assertEqual(int.from_bytes(payload[:2], "big"), 1002)

    def test_server_stop_closes_open_sockets_1001(self):
        folder = tempfile.mkdtemp(prefix="mishap-ws-stop-")
        try:
            with open(os.path.join(folder, "ws.yaml"), "w") as file:
                file.write(SCENARIO)
            process = subprocess.Popen([MISHAP, "serve", "--port", "0", "--scenarios", folder, "--log-level", "warning"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            url = "ws://" + re.search(r"listening on http://(\S+)", process.stdout.readline()).group(1)

            async def talk():
                sockets = [await websockets.connect(url + "/echo") for _ in range(20)]
                process.terminate()
                codes = []
                for ws in sockets:
                    with self.assertRaises(ConnectionClosed) as closed:
                        await ws.recv()
                    codes.append(closed.exception.rcvd.code if closed.exception.rcvd else None)
                return codes
            codes = self.run_async(talk())
            self.assertEqual(process.wait(timeout=15), 0)
            process.stdout.close()
            self.assertEqual(codes, [1001] * 20)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def test_200_sockets_at_once_hold_no_thread_each(self):
        def threads():
            return len(os.listdir(f"/proc/{self.mishap.process.pid}/task"))
        before = threads() if os.path.isdir("/proc") else None

        async def talk():
            sockets = await asyncio.gather(*[websockets.connect(self.url + "/echo") for _ in range(200)])
            during = threads() if before is not None else None
            await asyncio.gather(*[ws.send(f"message {index}") for index, ws in enumerate(sockets)])
            answers = await asyncio.gather(*[ws.recv() for ws in sockets])
            await asyncio.gather(*[ws.close() for ws in sockets])
            return during, answers
        during, answers = self.run_async(talk())
        self.assertEqual(answers, ["got it"] * 200)
        if before is not None:
            # One loop thread for every upgraded socket (started with the first), none per socket.
            self.assertLessEqual(during - before, 1)

    def test_delay_waits_before_the_upgrade(self):
        async def talk():
            start = time.monotonic()
            async with websockets.connect(self.url + "/slow") as ws:
                upgraded = time.monotonic() - start
                return upgraded, await ws.recv()
        upgraded, message = self.run_async(talk())
        self.assertGreaterEqual(upgraded, 0.4)
        self.assertEqual(message, "late")

    def test_300_sockets_with_faults_and_aborts_leave_nothing_open(self):
        if not os.path.isdir(f"/proc/{self.mishap.process.pid}/fd"):
            self.skipTest("needs /proc")

        def descriptors():
            return len(os.listdir(f"/proc/{self.mishap.process.pid}/fd"))
        before = descriptors()

        async def one(index):
            path = ["/echo", "/drop", "/reset", "/garbage", "/oversized", "/chat"][index % 6]
            try:
                async with websockets.connect(self.url + path) as ws:
                    if path == "/echo":
                        await ws.send("x")
                    await asyncio.wait_for(ws.recv(), 5)
                    if index % 4 == 0:
                        ws.transport.abort()  # the client vanishes: a reset mid-conversation
                        return
                    if path == "/echo":
                        return  # the client closes
                    while True:
                        await asyncio.wait_for(ws.recv(), 5)
            except ConnectionClosed:
                pass

        async def talk():
            for _ in range(3):
                await asyncio.gather(*[one(index) for index in range(100)])
        self.run_async(talk())
        deadline = time.monotonic() + 5
        while descriptors() > before + 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertLessEqual(descriptors(), before + 2)

    def test_wss_is_refused_with_501(self):
        folder = tempfile.mkdtemp(prefix="mishap-ws-tls-")
        try:
            os.makedirs(os.path.join(folder, "scenarios"))
            with open(os.path.join(folder, "scenarios", "ws.yaml"), "w") as file:
                file.write(SCENARIO)
            process = subprocess.Popen([MISHAP, "serve", "--port", "off", "--tls-port", "0", "--tls-dir", os.path.join(folder, "tls"),
                                        "--scenarios", os.path.join(folder, "scenarios"), "--log-level", "warning"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            try:
                https = re.search(r"listening on https://(\S+)", process.stdout.readline()).group(1)
                context = ssl.create_default_context()
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE

                async def talk():
                    with self.assertRaises(InvalidStatus) as refused:
                        await websockets.connect(f"wss://{https}/chat", ssl=context)
                    return refused.exception
                error = self.run_async(talk())
                self.assertEqual(error.response.status_code, 501)
                self.assertIn(b"use ws://", error.response.body)
            finally:
                process.terminate()
                process.wait(timeout=15)
                process.stdout.close()
        finally:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
