"""A stream of events or a WebSocket open longer than the two minutes the page follows other
open requests for: the requests view keeps showing its events and messages as long as the
journal says it goes on, stops asking for it once it is over, and still lets go of any other
request without a duration after two minutes. Run with the other dashboard tests (make
dashboard-check).

The page has no clock of its own to move: each test moves the page's `Date.now` three minutes on,
which is what the page reads to decide how long it follows a request, and wraps `fetch` to see
what each poll asks for."""

import base64
import os
import socket
import struct
import threading
import urllib.parse
import unittest

from test_dashboard import DURATION, PATH, SESSION, STATUS, DashboardTestCase, new_session
from test_streams_dashboard import masked

EVENTS_RULE = """endpoint: GET /long-feed
rules:
  - name: long feed
    respond:
      events: [ { id: 1, data: one }, { id: 2, data: two, delay: 3s }, { id: 3, data: three, delay: 60s } ]
"""

SOCKET_RULE = """endpoint: GET /long-ticker
rules:
  - name: long ticker
    respond:
      websocket:
        send: [ { text: "price 100" } ]
        replies: [ { when: { text: ping }, send: { text: pong } } ]
"""

QUIET_RULE = """endpoint: GET /long-quiet
rules:
  - name: long quiet
    respond: { websocket: { replies: [ { when: { text: ping }, send: { text: pong } } ] } }
"""

BUSY_RULES = """endpoints:
  - endpoint: GET /busy-feed
    rules:
      - name: busy feed
        respond:
          events: [ { id: 1, data: one }, { id: 2, data: two, delay: 8s }, { id: 3, data: three, delay: 60s } ]
  - endpoint: GET /busy
    rules:
      - { name: busy, respond: { status: 204 } }
"""

SLOW_RULE = """endpoint: GET /slow
rules:
  - { name: slow, respond: { status: 200, delay: 8s } }
"""

# Moves the page's clock three minutes on, and notes the `after` of every journal poll.
LATER_JS = """
const realNow = Date.now.bind(Date);
Date.now = () => realNow() + 180000;
window.pollsAfter = [];
const realFetch = window.fetch.bind(window);
window.fetch = (url, init) => {
  const query = new URL(String(url), location.href).searchParams;
  if (String(url).includes("/__mishap/requests?")) window.pollsAfter.push(Number(query.get("after")));
  return realFetch(url, init);
};
"""


class LongStreamsTests(DashboardTestCase):
    """Streams followed for as long as they go on; other open requests for two minutes."""

    def connect(self, path, headers):
        host, port = urllib.parse.urlsplit(self.mishap.url).netloc.split(":")
        client = socket.create_connection((host, int(port)), timeout=10)
        client.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n").encode())
        return client

    def row_status(self, session):
        rows = self.rows_of(session)
        return rows[0]["cells"][STATUS] if len(rows) == 1 else ""

    def entry(self, session):
        _, data = self.mishap.admin("GET", "requests", session=session)
        return data["requests"][-1]

    def polls_after(self):
        """The `after` of each journal poll since the clock was moved, and how many there were."""
        return self.driver.execute_script("return window.pollsAfter.slice();")

    def wait_for_polls_from(self, after, message):
        """Waits for three polls in a row that ask only for entries after `after`."""
        self.wait_for(lambda: (lambda polls: len(polls) >= 3 and polls[-3:] == [after] * 3)(self.polls_after()), message)

    def test_a_stream_open_past_two_minutes_is_still_followed_until_it_ends(self):
        session = new_session("long-events")
        status, _ = self.mishap.admin("POST", "rules", EVENTS_RULE, session=session)
        self.assertEqual(status, 201)
        self.open_page()
        client = self.connect(f"/__session/{session}/long-feed", [("Accept", "text/event-stream")])
        try:
            self.wait_for(lambda: "1 event" in self.row_status(session), "the row does not count the first event")
            self.driver.execute_script(LATER_JS)
            # Three minutes later, as the page sees it: the second event, sent 3 s after the first.
            self.wait_for(lambda: "2 events" in self.row_status(session), "the stream was let go of after two minutes")
            stream_id = self.rows_of(session)[0]["id"]
            self.assertTrue(self.entry(session)["eventStream"]["over"] is False, "the stream should still go on")
            self.assertIn(stream_id - 1, self.polls_after(), "the live stream was not asked for again")
        finally:
            client.close()
        # The client left: once the journal says it is over, the page stops asking for it.
        self.wait_for(lambda: self.entry(session)["eventStream"]["over"], "the stream did not end")
        last_id = self.driver.execute_script("return model.lastId;")
        self.wait_for_polls_from(last_id, "the page kept asking for a stream that is over")

    def test_a_socket_open_past_two_minutes_is_still_followed_until_it_closes(self):
        session = new_session("long-socket")
        status, _ = self.mishap.admin("POST", "rules", SOCKET_RULE, session=session)
        self.assertEqual(status, 201)
        self.open_page()
        key = base64.b64encode(os.urandom(16)).decode()
        client = self.connect(f"/__session/{session}/long-ticker", [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                                   ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")])
        try:
            self.assertIn(b" 101 ", client.recv(4096).split(b"\r\n")[0] + b" ")
            self.wait_for(lambda: "1 sent, 0 received" in self.row_status(session), "the row does not count the first message")
            self.driver.execute_script(LATER_JS)
            client.sendall(masked(0x1, b"ping"))
            self.wait_for(lambda: "2 sent, 1 received" in self.row_status(session), "the socket was let go of after two minutes")
            client.sendall(masked(0x8, struct.pack("!H", 1000) + b"done"))
            self.wait_for(lambda: "3 sent, 2 received" in self.row_status(session), "the close frames did not show")
        finally:
            client.close()
        self.wait_for(lambda: self.entry(session)["webSocket"]["over"], "the socket did not end")
        last_id = self.driver.execute_script("return model.lastId;")
        self.wait_for_polls_from(last_id, "the page kept asking for a socket that is closed")

    def test_a_socket_silent_past_two_minutes_is_still_followed(self):
        # No message yet: the journal has no `webSocket` for it, only its 101 without a duration.
        session = new_session("long-quiet")
        status, _ = self.mishap.admin("POST", "rules", QUIET_RULE, session=session)
        self.assertEqual(status, 201)
        self.open_page()
        key = base64.b64encode(os.urandom(16)).decode()
        client = self.connect(f"/__session/{session}/long-quiet", [("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                                                  ("Sec-WebSocket-Key", key), ("Sec-WebSocket-Version", "13")])
        try:
            self.assertIn(b" 101 ", client.recv(4096).split(b"\r\n")[0] + b" ")
            self.wait_for(lambda: self.row_status(session).startswith("101"), "no row for the socket")
            self.driver.execute_script(LATER_JS)
            client.sendall(masked(0x1, b"ping"))
            self.wait_for(lambda: "1 sent, 1 received" in self.row_status(session), "the silent socket was let go of")
        finally:
            client.close()
        self.wait_for(lambda: self.entry(session)["webSocket"]["over"], "the socket did not end")
        last_id = self.driver.execute_script("return model.lastId;")
        self.wait_for_polls_from(last_id, "the page kept asking for a socket that is closed")

    def test_a_stream_followed_while_many_requests_come_holds_up_no_new_row(self):
        session = new_session("busy")
        status, _ = self.mishap.admin("POST", "rules", BUSY_RULES, session=session)
        self.assertEqual(status, 201)
        self.open_page()
        client = self.connect(f"/__session/{session}/busy-feed", [("Accept", "text/event-stream")])
        try:
            self.wait_for(lambda: "1 event" in self.row_status(session), "the row does not count the first event")
            # 150 requests after the stream: more than one poll's 100 from the stream's entry.
            for _ in range(150):
                self.assertEqual(self.mishap.request("/busy", session=session)[0], 204)
            busy = lambda: [row for row in self.rows() if row["cells"][SESSION] == session and row["cells"][PATH] == "/busy"]
            self.wait_for(lambda: len(busy()) == 150, "new rows waited behind the stream", timeout=30)
            feed = lambda: [row for row in self.rows() if row["cells"][SESSION] == session and row["cells"][PATH] == "/busy-feed"]
            self.wait_for(lambda: "2 events" in feed()[0]["cells"][STATUS], "the stream's second event did not show", timeout=30)
        finally:
            client.close()

    def test_another_open_request_is_let_go_of_after_two_minutes(self):
        session = new_session("long-slow")
        status, _ = self.mishap.admin("POST", "rules", SLOW_RULE, session=session)
        self.assertEqual(status, 201)
        self.open_page()
        self.driver.execute_script(LATER_JS)
        answered = []
        thread = threading.Thread(target=lambda: answered.append(self.mishap.request("/slow", session=session)[0]))
        thread.start()
        try:
            self.wait_for(lambda: len(self.rows_of(session)) == 1, "no row for the slow request")
            self.assertIsNone(self.entry(session)["durationMs"], "the request should still be open")
            # Two minutes old to the page from the start: not asked for again while it waits.
            last_id = self.driver.execute_script("return model.lastId;")
            self.assertEqual(self.rows_of(session)[0]["id"], last_id)
            self.wait_for_polls_from(last_id, "a request without a duration was followed past two minutes")
            self.assertIsNone(self.entry(session)["durationMs"], "the request ended before the polls were seen")
        finally:
            thread.join(timeout=15)
        self.assertEqual(answered, [200])
        self.assertIsNotNone(self.entry(session)["durationMs"])
        polls = len(self.polls_after())
        self.wait_for(lambda: len(self.polls_after()) >= polls + 2, "the page stopped polling")
        self.assertEqual(self.rows_of(session)[0]["cells"][DURATION], "", "the row was updated after two minutes")


if __name__ == "__main__":
    unittest.main()
