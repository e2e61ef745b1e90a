"""A small TCP fault proxy for the chaos suite (no Toxiproxy and no ``tc netem`` here).

One listener on a free loopback port forwards to ``127.0.0.1:target``. Its behaviour can be
changed while traffic flows:

- ``latency_s``: every server→client chunk is held this long (a slow but working server);
- ``stall``: server→client bytes are held back entirely until the stall ends (a server that
  accepted the request and does not answer: the client's read timeout fires);
- ``down()`` / ``up()``: the listener refuses new connections and every open one is reset
  (the server is gone), then accepts again;
- ``on_client_bytes(fn)``: ``fn(data)`` sees every client→server chunk before it is forwarded
  and may return ``"forward"``, ``"kill"`` (the hook has killed the client; drop the chunk) or
  ``"forward-then-hold"`` (forward it, then never pass the server's answer back). This is how
  the suite kills a worker at an exact point of its conversation with PostgreSQL or S3.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable

Hook = Callable[[bytes], str]


class FaultProxy:
    def __init__(self, target_port: int, name: str = "proxy") -> None:
        self.target_port = target_port
        self.name = name
        self.latency_s = 0.0
        self._stalled = threading.Event()
        self._hook: Hook | None = None
        self._lock = threading.Lock()
        self._conns: set[socket.socket] = set()
        self._closed = False
        self._server: socket.socket | None = None
        self.port = 0
        self.connections = 0
        self._listen()

    # --- control ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def on_client_bytes(self, hook: Hook | None) -> None:
        self._hook = hook

    def stall(self, on: bool) -> None:
        if on:
            self._stalled.set()
        else:
            self._stalled.clear()

    def down(self) -> None:
        """Refuse new connections and reset the open ones (keeps the port for ``up``)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self._reset_all()

    def up(self) -> None:
        if self._server is None:
            self._listen(self.port)

    def close(self) -> None:
        self._closed = True
        self.down()

    # --- plumbing --------------------------------------------------------------------------

    def _listen(self, port: int = 0) -> None:
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen(128)
        self.port = int(server.getsockname()[1])
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True,
                         name=f"{self.name}-accept").start()

    def _reset_all(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, set()
        for conn in conns:
            with contextlib.suppress(OSError):
                # SO_LINGER 0: close sends a RST, as a vanished server's host would.
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
            with contextlib.suppress(OSError):
                conn.close()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return
            if self._server is not server:
                client.close()
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            self.connections += 1
            with self._lock:
                self._conns.update((client, upstream))
            held = threading.Event()
            threading.Thread(target=self._client_to_server, args=(client, upstream, held),
                             daemon=True).start()
            threading.Thread(target=self._server_to_client, args=(upstream, client, held),
                             daemon=True).start()

    def _client_to_server(self, src: socket.socket, dst: socket.socket,
                          held: threading.Event) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                hook = self._hook
                verdict = hook(data) if hook is not None else "forward"
                if verdict in ("kill", "forward-then-hold"):
                    held.set()  # before forwarding: the answer can come back at once
                if verdict == "kill":
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._shut(src, dst)

    def _server_to_client(self, src: socket.socket, dst: socket.socket,
                          held: threading.Event) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                while self._stalled.is_set() and not self._closed:
                    time.sleep(0.02)
                if held.is_set():
                    continue  # the client was killed at this point: it never hears back
                if self.latency_s:
                    time.sleep(self.latency_s)
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._shut(src, dst)

    def _shut(self, *socks: socket.socket) -> None:
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
