#!/usr/bin/env python3
"""Raw-socket abuse of an airnode provider (tcp transport, json codec).

Written from docs/wire.md; it needs nothing but Python 3. Each mode opens
plain TCP connections to 127.0.0.1:PORT and speaks the wire format by hand,
against `airnode serve --transport tcp` (the built-in demo.Echo service).

  atk.py slowread PORT CONNS REQS SIZE HOLD
      CONNS connections each pipeline REQS `Payload SIZE` requests (answers
      of about 4/3 x SIZE bytes in JSON) and read nothing for HOLD seconds:
      consumers that never read (README "Provider limits", unsent.limit).
  atk.py hold PORT CONNS silent|partial HOLD
      CONNS connections send nothing (or 3 bytes of a header) for HOLD
      seconds, then report how many the provider still keeps open.
  atk.py bighdr PORT CONNS SIZE HOLD
      CONNS connections each claim a body of SIZE bytes and send 1 byte.
  atk.py garbage PORT N
      N connections each send 4 KiB of random bytes and print the reply.

Run it at low priority (nice -n 19): it is meant to load the provider, not
the machine. Sample the provider's memory meanwhile with
`curl -s ADDR/metrics | grep -E 'heap_inuse|airnode_unsent'` (serve --metrics ADDR).
"""
import os
import socket
import struct
import sys
import threading
import time

HOST = '127.0.0.1'


def uvarint(n):
    out = b''
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def lstr(x):
    x = x.encode()
    return uvarint(len(x)) + x


def request(rid, method, arg, timeout_ms=60000):
    """One two-way json request frame for demo.Echo.METHOD(arg)."""
    body = (lstr('demo.Echo') + lstr(method) + uvarint(timeout_ms) +
            uvarint(1) + lstr('generic') + lstr('true') +  # one attachment
            uvarint(1) + (arg + '\n').encode())             # one argument
    # magic, flags (request, two-way, codec 2 = json), status, id, length
    return struct.pack('>HBBQI', 0xA17E, 0xC2, 0, rid, len(body)) + body


def connect(port):
    return socket.create_connection((HOST, port))


def still_open(conns):
    alive = 0
    for c in conns:
        try:
            c.setblocking(False)
            if c.recv(100) != b'':
                alive += 1
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    return alive


def slowread(port, nconn, nreq, size, hold):
    conns = []
    for _ in range(nconn):
        c = connect(port)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        conns.append(c)

    def send(c):
        try:
            for i in range(1, nreq + 1):
                c.sendall(request(i, 'Payload', str(size)))
        except OSError as e:
            print('write error', e)

    ts = [threading.Thread(target=send, args=(c,), daemon=True) for c in conns]
    for t in ts:
        t.start()
    print('sending', flush=True)
    time.sleep(hold)
    print('after', hold, 's still open', still_open(conns), flush=True)


def hold(port, nconn, partial, secs):
    conns, fails = [], 0
    for _ in range(nconn):
        try:
            c = connect(port)
            if partial:
                c.sendall(b'\xa1\x7e\xc2')
            conns.append(c)
        except OSError:
            fails += 1
    print('opened', len(conns), 'fails', fails, flush=True)
    time.sleep(secs)
    print('after', secs, 's still open', still_open(conns))


def bighdr(port, nconn, size, secs):
    conns = []
    for _ in range(nconn):
        c = connect(port)
        c.sendall(struct.pack('>HBBQI', 0xA17E, 0xC2, 0, 1, size) + b'x')
        conns.append(c)
    time.sleep(secs)
    print('held', nconn, 'still open', still_open(conns))


def garbage(port, n):
    for k in range(n):
        c = connect(port)
        c.sendall(os.urandom(4096))
        try:
            c.settimeout(2)
            print(k, 'read', c.recv(100)[:40])
        except OSError as e:
            print(k, 'error', e)
        c.close()


def main(a):
    if len(a) < 2:
        sys.exit(__doc__)
    mode, port = a[0], int(a[1])
    if mode == 'slowread' and len(a) == 6:
        slowread(port, int(a[2]), int(a[3]), int(a[4]), float(a[5]))
    elif mode == 'hold' and len(a) == 5:
        hold(port, int(a[2]), a[3] == 'partial', float(a[4]))
    elif mode == 'bighdr' and len(a) == 5:
        bighdr(port, int(a[2]), int(a[3]), float(a[4]))
    elif mode == 'garbage' and len(a) == 3:
        garbage(port, int(a[2]))
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main(sys.argv[1:])
