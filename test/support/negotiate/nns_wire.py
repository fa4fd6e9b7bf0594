"""The bytes of nns-client.py: MS-NNS frames over a socket (handshake frames with a big-endian size, data frames with
a little-endian length) and the little SPNEGO DER the client writes itself where MIT's SPNEGO will not (a NegTokenInit
listing Microsoft's Kerberos OID first, NegTokenResp fields)."""

import socket
import struct


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


SPNEGO_OID = "1.3.6.1.5.5.2"
NTLM_OID = "1.3.6.1.4.1.311.2.2.10"
KRB5_OID = "1.2.840.113554.1.2.2"
KRB5_MS_OID = "1.2.840.48018.1.2.2"


def der(tag, content):
    n = len(content)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + content


def der_oid(dotted):
    parts = [int(p) for p in dotted.split(".")]
    out = bytes([parts[0] * 40 + parts[1]])
    for p in parts[2:]:
        chunk = [p & 0x7F]
        p >>= 7
        while p:
            chunk.insert(0, 0x80 | (p & 0x7F))
            p >>= 7
        out += bytes(chunk)
    return der(0x06, out)


def der_read(data, at=0):
    """(tag, content, next offset) of the DER element at `at`."""
    tag = data[at]
    n = data[at + 1]
    at += 2
    if n & 0x80:
        count = n & 0x7F
        n = int.from_bytes(data[at : at + count], "big")
        at += count
    return tag, data[at : at + n], at + n


def neg_token_init(mech_types, mech_token):
    mechs = der(0x30, b"".join(der_oid(m) for m in mech_types))
    body = der(0x30, der(0xA0, mechs) + der(0xA2, der(0x04, mech_token)))
    return der(0x60, der_oid(SPNEGO_OID) + der(0xA0, body))


def neg_token_resp_fields(token):
    """The fields of a NegTokenResp: {0: negState, 1: supportedMech bytes, 2: responseToken, 3: mechListMIC}."""
    tag, body, _ = der_read(token)
    assert tag == 0xA1, "not a NegTokenResp"
    tag, seq, _ = der_read(body)
    fields = {}
    at = 0
    while at < len(seq):
        tag, content, at = der_read(seq, at)
        _, inner, _ = der_read(content)
        fields[tag & 0x1F] = inner
    return fields



def neg_token_resp(response_token=None, mech_list_mic=None):
    fields = b""
    if response_token is not None:
        fields += der(0xA2, der(0x04, response_token))
    if mech_list_mic is not None:
        fields += der(0xA3, der(0x04, mech_list_mic))
    return der(0xA1, der(0x30, fields))

