#!/usr/bin/env python3
"""A sign-up form's username check, as an app would write it: for `mishap sweep`.

    mishap sweep --endpoint "GET /isUserNameAvailable" -- python3 docs/examples/username_client.py

Asks GET $MISHAP_URL/isUserNameAvailable?userName=NAME (NAME: the first argument, else
"newuser"; MISHAP_URL defaults to http://127.0.0.1:8080) and prints what the form would show.
It retries sensibly: at most 3 attempts; again after a transport fault, a timeout (1 s per
attempt), a 408, or a 500, 502, 503 or 504 without Retry-After, waiting 0.5 s, then 2 s
(plus up to 10% jitter); after a 429 or 503 with Retry-After, waits that long if it is 5 s or
less, else gives up at once and says when to try again; never retries any other 4xx.

Exit status: 0 when the form showed something sensible (an answer, or an error message),
1 when the client crashed. It has one bug, on purpose, for the sweep to find: it decodes the
body as UTF-8 outside the error handling, so invalid UTF-8 (the rule badUTF8) crashes it.
"""

import http.client
import json
import os
import random
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

ATTEMPTS = 3
TIMEOUT_SECONDS = 1.0
BACKOFF_SECONDS = [0.5, 2.0]
LONGEST_RETRY_AFTER = 5.0


def retry_after_seconds(value):
    """Retry-After in seconds: a number, or an HTTP-date; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        from email.utils import parsedate_to_datetime
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def fetch(url):
    """One attempt: (status, headers, body bytes). Raises OSError or HTTPException on a transport fault."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.headers, error.read()


def check(base, name):
    url = base.rstrip("/") + "/isUserNameAvailable?" + urllib.parse.urlencode({"userName": name})
    for attempt in range(1, ATTEMPTS + 1):
        last = attempt == ATTEMPTS
        backoff = BACKOFF_SECONDS[min(attempt, len(BACKOFF_SECONDS)) - 1] * (1 + random.random() / 10)
        try:
            status, headers, body = fetch(url)
        except (OSError, http.client.HTTPException) as error:
            reason = getattr(error, "reason", None) or error.__class__.__name__
            if last:
                return "Cannot reach the server (%s). Check your connection." % reason
            time.sleep(backoff)
            continue
        if status in (429, 503) and headers.get("Retry-After") is not None:
            wait = retry_after_seconds(headers.get("Retry-After"))
            if wait is None or wait > LONGEST_RETRY_AFTER or last:
                return "The server is busy; try again in %d s." % round(wait or 60)
            time.sleep(wait)
            continue
        if status == 408 or (status in (500, 502, 503, 504) and headers.get("Retry-After") is None):
            if last:
                return "The server failed (%d). Try again later." % status
            time.sleep(backoff)
            continue
        if status >= 400:
            if headers.get("Retry-After") is not None:
                return "The server is unavailable; try again in %s s." % headers.get("Retry-After")
            return "Not accepted (%d)." % status
        # The bug: bytes that are not UTF-8 raise UnicodeDecodeError, which nothing catches.
        text = body.decode("utf-8")
        try:
            answer = json.loads(text)
        except json.JSONDecodeError:
            return "The server's answer was not understood."
        if not isinstance(answer, dict) or not isinstance(answer.get("isAvailable"), bool) \
                or not isinstance(answer.get("userName"), str):
            return "The server's answer was not understood."
        return "%s is %s." % (answer["userName"], "available" if answer["isAvailable"] else "taken")
    return "Try again later."


def main():
    base = os.environ.get("MISHAP_URL", "http://127.0.0.1:8080")
    name = sys.argv[1] if len(sys.argv) > 1 else "newuser"
    socket.setdefaulttimeout(TIMEOUT_SECONDS)
    print(check(base, name))


if __name__ == "__main__":
    main()
