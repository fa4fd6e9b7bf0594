#!/usr/bin/python3
"""A NegotiateStream (MS-NNS) client for the bridge's tests, built on real initiators: MIT GSSAPI with SPNEGO and
gss-ntlmssp (python3-gssapi), and impacket's NTLM client (no MIC). It speaks NNS framing only (no .NET Message
Framing): the test server on the other end runs tcp-bridge/src/negotiate/stream.ts and echoes the plaintext.

usage: nns-client.py PORT MODE [--sign-only [--plain-sign]] [--message HEX]... [--pattern N]... [--record FILE]
                     [--replay FILE] [--preamble HEX]
modes:
  echo      handshake, then send each --message and read its echo
  nettcp    the bridge itself: --preamble (framing records up to the UpgradeRequest) in the clear, UpgradeResponse,
            handshake, then each --message (framing records) sealed, reading one data frame back for each
  tamper    handshake, one good message, then a sealed message with one byte flipped
  reorder   handshake, then two wrapped messages sent in the wrong order
  replay    send the NEGOTIATE and AUTHENTICATE recorded by an earlier `echo --record FILE`
  impacket  impacket NTLMv2 (no MIC) inside SPNEGO
  impacket-v1  impacket NTLMv1 inside SPNEGO
  (--version-field: the impacket modes send a 40-byte NEGOTIATE with a Version field instead of impacket's 32 bytes)
--plain-sign (with --sign-only) sends and expects signed-only frames in MS-NLMP's form, signature then plaintext
(gss_get_mic / gss_verify_mic), as Windows SSPI sends them under ProtectionLevel.Sign; without it gss_wrap seals even
when only signing was negotiated. The credentials of gssapi modes come from NTLM_USER_FILE (gss-ntlmssp takes its first line), or with --krb5 from the
Kerberos ticket cache KRB5CCNAME (after kinit); impacket modes take --user DOMAIN\\user --password P. Prints one JSON
object: {"result": "ok" | "refused" | "closed", ...}.

--target NAME       the service, host-based (default host@localhost), for NTLM (MsvAvTargetName) and Kerberos
Kerberos options (with --krb5):
  --no-mutual       do not ask for mutual authentication
  --dotnet-flags    ask for what .NET's NegotiateStream asks for: Confidentiality + MutualAuth (EncryptAndSign), or
                    Integrity + ReplayDetect + SequenceDetect + MutualAuth (--sign-only)
  --no-ci-flags     keep MIT from adding Confidentiality and Integrity on its own (GSS_KRB5_CRED_NO_CI_FLAGS_X), as a
                    Windows client asking for Sign only
  --spnego-ms       build the SPNEGO NegTokenInit here, listing the Microsoft Kerberos OID first (as Windows does)
                    around the raw krb5 token; --ms-inner-oid also puts that OID in the inner token's header
  --raw-krb5        no SPNEGO: the raw krb5 tokens (RFC 2743 framing)
  --rrc N           rotate each wrap token sent by N bytes (RFC 4121 RRC; Windows sends 28 when sealing)
  --other-mech-first  a NegTokenInit listing NTLM first: the server picks Kerberos with request-mic and both sides
                    exchange mechListMICs (--tamper-mic spoils ours)
mode krb5-tokens (PORT ignored): prints {"tokens": [hex...]}, --count initial krb5 tokens for host@localhost

The frames and the SPNEGO DER this client writes are in nns_wire.py, its GSSAPI handshakes in nns_handshake.py.
"""

import argparse
import json
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the modules below, in the repository

from nns_handshake import gss_handshake, krb5_context  # noqa: E402 (after the line above)
from nns_wire import (  # noqa: E402
    KRB5_OID,
    connect,
    read_data,
    read_handshake,
    recv_exact,
    refused,
    send_data,
    send_handshake,
)


def run_krb5_tokens(args):
    """Initial krb5 tokens (AP-REQ) for host@localhost, one per fresh context: for tests that drive the acceptor
    directly."""
    tokens = []
    for _ in range(args.count):
        tokens.append(krb5_context(args, KRB5_OID).step().hex())
    return {"result": "ok", "tokens": tokens}


PLAIN_SIGN = False


def wrap(ctx, data, sign_only, rrc=0):
    if PLAIN_SIGN:
        return ctx.get_signature(data) + data
    token = ctx.wrap(data, not sign_only).message
    if rrc and token[:2] == b"\x05\x04":
        # RFC 4121 4.2.5: rotate the part after the 16-byte header right by RRC, and say so in the header.
        header, body = token[:16], token[16:]
        assert header[6:8] == b"\x00\x00"
        token = header[:6] + rrc.to_bytes(2, "big") + header[8:] + body[-rrc:] + body[:-rrc]
    return token


def unwrap(ctx, payload):
    if PLAIN_SIGN:
        ctx.verify_signature(payload[16:], payload[:16])
        return payload[16:]
    return ctx.unwrap(payload).message


def read_echo(ctx, sock, expected_length):
    got = b""
    while len(got) < expected_length:
        payload = read_data(sock)
        if payload is None:
            return None
        got += unwrap(ctx, payload)
    return got


def session_result(ctx, args, replies):
    result = {"result": "ok", "replies": replies, "encrypted_flag": bool(ctx.actual_flags & 16)}
    if args.krb5:
        result["flags"] = int(ctx.actual_flags)
        result["mutual"] = bool(ctx.actual_flags & 2)
    return result


def run_echo(args):
    sock = connect(args.port)
    ctx, failure = gss_handshake(sock, args.sign_only, args.record, args)
    if failure:
        return failure
    replies = []
    for hex_message in args.message:
        message = bytes.fromhex(hex_message)
        for at in range(0, len(message), 63 * 1024):
            send_data(sock, wrap(ctx, message[at : at + 63 * 1024], args.sign_only, args.rrc))
        reply = read_echo(ctx, sock, len(message))
        if reply is None:
            return {"result": "closed", "replies": replies}
        replies.append(reply.hex())
    sock.close()
    return session_result(ctx, args, replies)


def run_nettcp(args):
    sock = connect(args.port)
    sock.sendall(bytes.fromhex(args.preamble))
    answer = recv_exact(sock, 1)
    if answer != b"\x0a":
        return {"result": "framing", "record": answer.hex() if answer else None}
    ctx, failure = gss_handshake(sock, args.sign_only, None, args)
    if failure:
        return failure
    replies = []
    for hex_message in args.message:
        send_data(sock, wrap(ctx, bytes.fromhex(hex_message), args.sign_only))
        payload = read_data(sock)
        if payload is None:
            return {"result": "closed", "replies": replies}
        replies.append(unwrap(ctx, payload).hex())
    sock.close()
    return session_result(ctx, args, replies)


def run_tamper(args):
    sock = connect(args.port)
    ctx, failure = gss_handshake(sock, args.sign_only, None, args)
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
    ctx, failure = gss_handshake(sock, args.sign_only, None, args)
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
    if args.version_field:
        # A 40-byte NEGOTIATE with a Version (impacket sends 32 bytes without), which gss-ntlmssp 1.2 needs
        negotiate["os_version"] = bytes([10, 0, 0x7C, 0x4F, 0, 0, 0, 15])
    init = SPNEGO_NegTokenInit()
    init["MechTypes"] = [TypesMech["NTLMSSP - Microsoft NTLM Security Support Provider"]]
    init["MechToken"] = negotiate.getData()
    send_handshake(sock, 0x16, init.getData())
    message_id, payload = read_handshake(sock)
    if message_id != 0x16:
        return refused(payload) if message_id == 0x15 else {"result": "closed"}
    challenge = SPNEGO_NegTokenResp(payload)["ResponseToken"]
    authenticate, _ = ntlm.getNTLMSSPType3(negotiate, challenge, user, args.password, domain, use_ntlmv2=v2)
    if authenticate["flags"] & ntlm.NTLMSSP_NEGOTIATE_VERSION:
        # impacket counts the Version and MIC fields in its offsets but leaves them empty: a zero MIC, not announced
        authenticate["Version"] = bytes([10, 0, 0x7C, 0x4F, 0, 0, 0, 15])
        authenticate["MIC"] = bytes(16)
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
    parser.add_argument("--plain-sign", action="store_true")
    parser.add_argument("--version-field", action="store_true")
    parser.add_argument("--message", action="append", default=[])
    parser.add_argument("--pattern", type=int, action="append", default=[], help="a message of N bytes (i * 7) & 0xff")
    parser.add_argument("--record")
    parser.add_argument("--replay")
    parser.add_argument("--user", default="")
    parser.add_argument("--password", default="")
    parser.add_argument("--krb5", action="store_true")
    parser.add_argument("--target", default="host@localhost")
    parser.add_argument("--no-mutual", action="store_true")
    parser.add_argument("--dotnet-flags", action="store_true")
    parser.add_argument("--no-ci-flags", action="store_true")
    parser.add_argument("--spnego-ms", action="store_true")
    parser.add_argument("--ms-inner-oid", action="store_true")
    parser.add_argument("--raw-krb5", action="store_true")
    parser.add_argument("--rrc", type=int, default=0)
    parser.add_argument("--other-mech-first", action="store_true")
    parser.add_argument("--tamper-mic", action="store_true")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--preamble", default="")
    args = parser.parse_args()
    global PLAIN_SIGN
    PLAIN_SIGN = args.plain_sign
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
        elif args.mode == "krb5-tokens":
            result = run_krb5_tokens(args)
        else:
            result = {"result": "usage"}
    except Exception as error:  # the test reads the JSON; a traceback alone would hide the cause
        result = {"result": "error", "error": f"{type(error).__name__}: {error}"}
    print(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
