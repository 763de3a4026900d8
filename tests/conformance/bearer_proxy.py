"""A loopback HTTP proxy that adds the bridge's bearer token to every request, for
clients that cannot send a header of their own (the MCP conformance suite). Each
connection carries one request (`Connection: close` is forced), so the header is added
to every request. Usage: bearer_proxy.py <bridge port> <token> <port file>; it listens
on 127.0.0.1 (a port the OS picks, written to <port file>) until killed."""

import asyncio
import sys

HEAD_LIMIT = 64 * 1024


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        try:
            writer.close()
        except Exception:  # noqa: BLE001 - closing a socket that is already gone
            pass


def rewrite_host(line, own_port, upstream_port):
    """`Host: 127.0.0.1:<our port>` (or `Origin: http://…` of it) names the bridge's port
    instead (the bridge refuses another port); any other value (a DNS-rebinding probe)
    passes unchanged."""
    name, _, value = line.partition(b":")
    value = value.strip().decode("latin-1")
    scheme = "http://" if value.startswith("http://") else ""
    host = value[len(scheme):]
    for local in ("127.0.0.1", "localhost", "[::1]"):
        if host == f"{local}:{own_port}":
            return name + f": {scheme}{local}:{upstream_port}".encode()
    return line


async def serve_one(client_r, client_w, upstream_port, token):
    try:
        head = await client_r.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        client_w.close()
        return
    lines = head[:-4].split(b"\r\n")
    own_port = client_w.get_extra_info("sockname")[1]
    kept = [
        rewrite_host(l, own_port, upstream_port) if l.lower().startswith((b"host:", b"origin:")) else l
        for l in lines[1:]
        if not l.lower().startswith((b"connection:", b"authorization:", b"keep-alive:"))
    ]
    new_head = b"\r\n".join([lines[0], *kept, b"Authorization: Bearer " + token.encode(), b"Connection: close"]) + b"\r\n\r\n"
    try:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", upstream_port)
    except OSError:
        client_w.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        client_w.close()
        return
    up_w.write(new_head)
    await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w))


async def main():
    upstream_port, token, port_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    server = await asyncio.start_server(
        lambda r, w: serve_one(r, w, upstream_port, token), "127.0.0.1", 0, limit=HEAD_LIMIT
    )
    port = server.sockets[0].getsockname()[1]
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port))
    import os

    os.replace(port_file + ".tmp", port_file)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
