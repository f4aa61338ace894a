"""The requests view following streams as they pass: a WebSocket's messages (the last ones,
their direction and text, escaped) and a stream of events' count, last id and ending, in
headless Chromium. Run with the other dashboard tests (make dashboard-check)."""

import base64
import os
import socket
import struct
import urllib.parse
import unittest


from test_dashboard import STATUS, DashboardTestCase, new_session

SOCKET_RULE = """endpoint: GET /ticker
rules:
  - name: ticker
    respond:
      websocket:
        send: [ { text: "price 100" }, { text: "<img src=x onerror=alert(1)><b>bold</b>" } ]
        replies: [ { when: { text: ping }, send: { text: pong } } ]
"""

EVENTS_RULE = """endpoint: GET /feed
rules:
  - name: feed
    respond:
      events: [ { id: 1, data: one }, { id: 2, data: two, delay: 1500ms } ]
"""


def masked(opcode, payload):
    """A client frame: final, masked, short."""
    mask = os.urandom(4)
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class StreamsTests(DashboardTestCase):
    """A socket's and a stream's entries, updated while they go on."""

    def connect(self, path, headers):
        host, port = urllib.parse.urlsplit(self.mishap.url).netloc.split(":")
        client = socket.create_connection((host, int(port)), timeout=10)
        client.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode())
        return client

    def messages(self):
        """The detail's messages table: each row's cells' text."""
        return self.driver.execute_script("""return [...document.querySelectorAll('#detail-messages tbody tr')]
          .filter(row => row.cells.length > 1).map(row => [...row.cells].map(cell => cell.textContent));""")

    def open_detail(self, session):
        rows = self.wait_for(lambda: len(self.rows_of(session)) == 1 and self.rows_of(session), "no row for the stream")
        self.css(f'#requests-body tr[data-id="{rows[0]["id"]}"]')[0].click()
        panel = self.find("request-detail")
        self.wait_for(lambda: panel.is_displayed(), "the detail did not open")

    def test_a_sockets_messages_show_as_they_pass(self):
        session = new_session("socket")
        status, _ = self.mishap.admin("POST", "rules", SOCKET_RULE, session=session)
        self.assertEqual(status, 201)
        self.open_page()
        key = base64.b64encode(os.urandom(16)).decode()
        client = self.connect(f"/__session/{session}/ticker", [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                              ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")])
        try:
            self.assertIn(b" 101 ", client.recv(4096).split(b"\r\n")[0] + b" ")
            row = self.wait_for(lambda: [r for r in self.rows_of(session) if "2 sent, 0 received" in r["cells"][STATUS]],
                                "the row does not count the socket's messages")[0]
            self.assertTrue(row["cells"][STATUS].startswith("101"))
            self.open_detail(session)
            self.wait_for(lambda: self.find("detail-websocket").text == "2 sent, 0 received, open", "the socket's line is missing")
            messages = self.wait_for(lambda: len(self.messages()) == 2 and self.messages(), "the messages are not listed")
            self.assertEqual([m[1:] for m in messages], [
                ["sent", "text", "<img src=x onerror=alert(1)><b>bold</b>"], ["sent", "text", "price 100"]])
            self.assertEqual(self.css("#request-detail img, #request-detail b"), [], "journal text became markup")

            # The client's messages show as they pass, with the detail open.
            client.sendall(masked(0x1, b"ping"))
            self.wait_for(lambda: self.find("detail-websocket").text == "3 sent, 1 received, open", "the reply did not show")
            self.assertEqual(self.wait_for(lambda: len(self.messages()) == 4 and self.messages(), "the reply is not listed")[0][1:],
                             ["sent", "text", "pong"])
            client.sendall(masked(0x8, struct.pack("!H", 1000) + b"done"))
            self.wait_for(lambda: self.find("detail-websocket").text == "4 sent, 2 received, closed by the client (1000 done)",
                          "the end did not show")
            last = self.wait_for(lambda: len(self.messages()) == 6 and self.messages(), "the close frames are not listed")
            self.assertEqual([m[1:] for m in last[:2]], [["sent", "close", "1000 "], ["received", "close", "1000 done"]])
        finally:
            client.close()

    def test_a_streams_events_show_as_they_are_sent(self):
        session = new_session("events")
        status, _ = self.mishap.admin("POST", "rules", EVENTS_RULE, session=session)
        self.assertEqual(status, 201)
        self.open_page()
        client = self.connect(f"/__session/{session}/feed", [("Accept", "text/event-stream")])
        try:
            self.wait_for(lambda: [r for r in self.rows_of(session) if "1 event" in r["cells"][STATUS]], "the row does not count the events")
            self.open_detail(session)
            self.wait_for(lambda: self.find("detail-events").text == "1 event, last id 1, going on", "the stream's line is missing")
            self.wait_for(lambda: self.find("detail-events").text == "2 events, last id 2, ended cleanly", "the stream's end did not show")
            self.assertIn("2 events", self.rows_of(session)[0]["cells"][STATUS])
        finally:
            client.close()


if __name__ == "__main__":
    unittest.main()
