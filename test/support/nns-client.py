#!/usr/bin/python3
"""A NegotiateStream (MS-NNS) client for the bridge's tests, built on real initiators: MIT GSSAPI with SPNEGO and
gss-ntlmssp (python3-gssapi), and impacket's NTLM client (no MIC). It speaks NNS framing only (no .NET Message
Framing): the test server on the other end runs tcp-bridge/src/negotiate/stream.ts and echoes the plaintext.

usage: nns-client.py PORT MODE [--sign-only] [--message HEX]... [--pattern N]... [--record FILE] [--replay FILE]
                     [--preamble HEX]
modes:
  echo      handshake, then send each --message and read its echo
  nettcp    the bridge itself: --preamble (framing records up to the UpgradeRequest) in the clear, UpgradeResponse,
            handshake, then each --message (framing records) sealed, reading one data frame back for each
  tamper    handshake, one good message, then a sealed message with one byte flipped
  reorder   handshake, then two wrapped messages sent in the wrong order
  replay    send the NEGOTIATE and AUTHENTICATE recorded by an earlier `echo --record FILE`
  impacket  impacket NTLMv2 (no MIC) inside SPNEGO
  impacket-v1  impacket NTLMv1 inside SPNEGO
The credentials of gssapi modes come from NTLM_USER_FILE (gss-ntlmssp takes its first line); impacket modes take
--user DOMAIN\\user --password P. Prints one JSON object: {"result": "ok" | "refused" | "closed", ...}.
"""

import argparse
import json
import socket
import struct
import sys


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def send_handshake(sock, message_id, token):
    sock.sendall(bytes([message_id, 1, 0, len(token) >> 8, len(token) & 0xFF]) + token)


def read_handshake(sock):
    header = recv_exact(sock, 5)
    if header is None:
        return None, None
    size = (header[3] << 8) | header[4]
    payload = recv_exact(sock, size) if size else b""
    return header[0], payload


def send_data(sock, payload):
    sock.sendall(struct.pack("<I", len(payload)) + payload)


def read_data(sock):
    header = recv_exact(sock, 4)
    if header is None:
        return None
    (size,) = struct.unpack("<I", header)
    return recv_exact(sock, size)


def refused(payload):
    status = payload.hex() if payload is not None else None
    return {"result": "refused", "status": status}


def connect(port):
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(20)
    return sock


def gss_handshake(sock, sign_only, record):
    import gssapi

    spnego = gssapi.OID.from_int_seq("1.3.6.1.5.5.2")
    flags = gssapi.RequirementFlag.integrity | gssapi.RequirementFlag.out_of_sequence_detection | gssapi.RequirementFlag.replay_detection
    if not sign_only:
        flags |= gssapi.RequirementFlag.confidentiality
    name = gssapi.Name("host@localhost", gssapi.NameType.hostbased_service)
    ctx = gssapi.SecurityContext(name=name, mech=spnego, usage="initiate", flags=flags)
    token = ctx.step()
    sent = []
    while True:
        sent.append(token)
        send_handshake(sock, 0x14 if ctx.complete else 0x16, token)
        message_id, payload = read_handshake(sock)
        if message_id is None:
            return None, {"result": "closed"}
        if message_id == 0x15:
            return None, refused(payload)
        if message_id == 0x14:
            if payload:
                ctx.step(payload)
            break
        token = ctx.step(payload)
    if record:
        with open(record, "w") as f:
            json.dump([t.hex() for t in sent], f)
    if not ctx.complete:
        return None, {"result": "incomplete"}
    return ctx, None


def wrap(ctx, data, sign_only):
    return ctx.wrap(data, not sign_only).message


def read_echo(ctx, sock, expected_length):
    got = b""
    while len(got) < expected_length:
        payload = read_data(sock)
        if payload is None:
            return None
        got += ctx.unwrap(payload).message
    return got


def run_echo(args):
    sock = connect(args.port)
    ctx, failure = gss_handshake(sock, args.sign_only, args.record)
    if failure:
        return failure
    replies = []
    for hex_message in args.message:
        message = bytes.fromhex(hex_message)
        for at in range(0, len(message), 63 * 1024):
            send_data(sock, wrap(ctx, message[at : at + 63 * 1024], args.sign_only))
        reply = read_echo(ctx, sock, len(message))
        if reply is None:
            return {"result": "closed", "replies": replies}
        replies.append(reply.hex())
    sock.close()
    return {"result": "ok", "replies": replies, "encrypted_flag": bool(ctx.actual_flags & 16)}


def run_nettcp(args):
    sock = connect(args.port)
    sock.sendall(bytes.fromhex(args.preamble))
    answer = recv_exact(sock, 1)
    if answer != b"\x0a":
        return {"result": "framing", "record": answer.hex() if answer else None}
    ctx, failure = gss_handshake(sock, args.sign_only, None)
    if failure:
        return failure
    replies = []
    for hex_message in args.message:
        send_data(sock, wrap(ctx, bytes.fromhex(hex_message), args.sign_only))
        payload = read_data(sock)
        if payload is None:
            return {"result": "closed", "replies": replies}
        replies.append(ctx.unwrap(payload).message.hex())
    sock.close()
    return {"result": "ok", "replies": replies, "encrypted_flag": bool(ctx.actual_flags & 16)}


def run_tamper(args):
    sock = connect(args.port)
    ctx, failure = gss_handshake(sock, args.sign_only, None)
    if failure:
        return failure
    send_data(sock, wrap(ctx, b"first", args.sign_only))
    first = read_echo(ctx, sock, 5)
    sealed = bytearray(wrap(ctx, b"second message", args.sign_only))
    sealed[20] ^= 0x01  # a byte of the (sealed) data, after the 16-byte signature
    send_data(sock, bytes(sealed))
    after = read_data(sock)
    return {"result": "closed" if after is None else "reply", "first": first.hex() if first else None}


def run_reorder(args):
    sock = connect(args.port)
    ctx, failure = gss_handshake(sock, args.sign_only, None)
    if failure:
        return failure
    one = wrap(ctx, b"one", args.sign_only)
    two = wrap(ctx, b"two", args.sign_only)
    send_data(sock, two)
    send_data(sock, one)
    after = read_data(sock)
    return {"result": "closed" if after is None else "reply"}


def run_replay(args):
    with open(args.replay) as f:
        tokens = [bytes.fromhex(t) for t in json.load(f)]
    sock = connect(args.port)
    for token in tokens:
        send_handshake(sock, 0x16, token)
        message_id, payload = read_handshake(sock)
        if message_id is None:
            return {"result": "closed"}
        if message_id == 0x15:
            return refused(payload)
        if message_id == 0x14:
            return {"result": "ok"}
    return {"result": "incomplete"}


def run_impacket(args, v2):
    from impacket import ntlm
    from impacket.spnego import SPNEGO_NegTokenInit, SPNEGO_NegTokenResp, TypesMech

    domain, _, user = args.user.partition("\\")
    sock = connect(args.port)
    negotiate = ntlm.getNTLMSSPType1("", "", signingRequired=True, use_ntlmv2=v2)
    negotiate["flags"] |= ntlm.NTLMSSP_NEGOTIATE_SEAL | ntlm.NTLMSSP_NEGOTIATE_KEY_EXCH | ntlm.NTLMSSP_NEGOTIATE_128
    init = SPNEGO_NegTokenInit()
    init["MechTypes"] = [TypesMech["NTLMSSP - Microsoft NTLM Security Support Provider"]]
    init["MechToken"] = negotiate.getData()
    send_handshake(sock, 0x16, init.getData())
    message_id, payload = read_handshake(sock)
    if message_id != 0x16:
        return refused(payload) if message_id == 0x15 else {"result": "closed"}
    challenge = SPNEGO_NegTokenResp(payload)["ResponseToken"]
    authenticate, _ = ntlm.getNTLMSSPType3(negotiate, challenge, user, args.password, domain, use_ntlmv2=v2)
    resp = SPNEGO_NegTokenResp()
    resp["ResponseToken"] = authenticate.getData()
    send_handshake(sock, 0x16, resp.getData())
    message_id, payload = read_handshake(sock)
    if message_id == 0x15:
        return refused(payload)
    return {"result": "ok" if message_id == 0x14 else "closed"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("mode")
    parser.add_argument("--sign-only", action="store_true")
    parser.add_argument("--message", action="append", default=[])
    parser.add_argument("--pattern", type=int, action="append", default=[], help="a message of N bytes (i * 7) & 0xff")
    parser.add_argument("--record")
    parser.add_argument("--replay")
    parser.add_argument("--user", default="")
    parser.add_argument("--password", default="")
    parser.add_argument("--preamble", default="")
    args = parser.parse_args()
    try:
        args.message += [bytes((i * 7) & 0xFF for i in range(n)).hex() for n in args.pattern]
        if args.mode == "echo":
            result = run_echo(args)
        elif args.mode == "nettcp":
            result = run_nettcp(args)
        elif args.mode == "tamper":
            result = run_tamper(args)
        elif args.mode == "reorder":
            result = run_reorder(args)
        elif args.mode == "replay":
            result = run_replay(args)
        elif args.mode == "impacket":
            result = run_impacket(args, True)
        elif args.mode == "impacket-v1":
            result = run_impacket(args, False)
        else:
            result = {"result": "usage"}
    except Exception as error:  # the test reads the JSON; a traceback alone would hide the cause
        result = {"result": "error", "error": f"{type(error).__name__}: {error}"}
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
