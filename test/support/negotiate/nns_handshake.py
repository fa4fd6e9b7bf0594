"""The handshakes of nns-client.py: MIT GSSAPI initiators (python3-gssapi) for SPNEGO (NTLM through gss-ntlmssp, or
Kerberos), and Kerberos the way Windows' SSPI sends it (SPNEGO built here, raw krb5 tokens, a second-choice mechanism
with mechListMICs). Each returns (context, None) or (None, the JSON result of a refusal)."""

import json

from nns_wire import (
    KRB5_MS_OID,
    KRB5_OID,
    NTLM_OID,
    SPNEGO_OID,
    der,
    der_oid,
    der_read,
    neg_token_init,
    neg_token_resp,
    neg_token_resp_fields,
    read_handshake,
    refused,
    send_handshake,
)


def krb5_context(args, mech):
    import gssapi
    import gssapi.raw

    F = gssapi.RequirementFlag
    if args.dotnet_flags:
        wanted = [F.mutual_authentication] + ([F.integrity, F.replay_detection, F.out_of_sequence_detection] if args.sign_only else [F.confidentiality])
    else:
        wanted = [F.integrity, F.out_of_sequence_detection, F.replay_detection]
        wanted += [] if args.sign_only else [F.confidentiality]
        wanted += [] if args.no_mutual else [F.mutual_authentication]
    flags = wanted[0]
    for flag in wanted[1:]:
        flags |= flag
    # The credential for the context's own mechanism: SPNEGO passes its options on to krb5 under it.
    creds = gssapi.Credentials(usage="initiate", mechs=[gssapi.OID.from_int_seq(mech)])
    if args.no_ci_flags:
        gssapi.raw.set_cred_option(gssapi.OID.from_int_seq("1.2.752.43.13.29"), creds)
    name = gssapi.Name(args.target, gssapi.NameType.hostbased_service)
    return gssapi.SecurityContext(name=name, mech=gssapi.OID.from_int_seq(mech), usage="initiate", flags=flags, creds=creds)


def gss_handshake(sock, sign_only, record, args=None):
    import gssapi

    if args is not None and args.krb5 and (args.spnego_ms or args.raw_krb5 or args.other_mech_first):
        return krb5_handshake(sock, args, record)
    spnego = gssapi.OID.from_int_seq(SPNEGO_OID)
    if args is not None and args.krb5:
        ctx = krb5_context(args, SPNEGO_OID)
    else:
        flags = gssapi.RequirementFlag.integrity | gssapi.RequirementFlag.out_of_sequence_detection | gssapi.RequirementFlag.replay_detection
        if not sign_only:
            flags |= gssapi.RequirementFlag.confidentiality
        # The target (--target) is NTLM's MsvAvTargetName too, which the bridge checks against its SPN.
        name = gssapi.Name(args.target if args is not None else "host@localhost", gssapi.NameType.hostbased_service)
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


def krb5_handshake(sock, args, record):
    """Kerberos without MIT's SPNEGO: the raw krb5 tokens (--raw-krb5), or a NegTokenInit built here listing the
    Microsoft OID first (--spnego-ms), as Windows' SSPI does."""
    ctx = krb5_context(args, KRB5_OID)
    token = ctx.step()
    if args.ms_inner_oid:
        # The RFC 2743 header's OID: 1.2.840.113554.1.2.2 and 1.2.840.48018.1.2.2 have the same length.
        tag, inner, _ = der_read(token)
        oid_at = len(token) - len(inner)
        assert token[oid_at : oid_at + 11] == der_oid(KRB5_OID)
        token = token[:oid_at] + der_oid(KRB5_MS_OID) + token[oid_at + 11 :]
    if args.other_mech_first:
        return krb5_second_choice(sock, args, ctx, token)
    first = token if args.raw_krb5 else neg_token_init([KRB5_MS_OID, KRB5_OID], token)
    if record:
        with open(record, "w") as f:
            json.dump([first.hex()], f)
    send_handshake(sock, 0x16, first)
    message_id, payload = read_handshake(sock)
    if message_id is None:
        return None, {"result": "closed"}
    if message_id == 0x15:
        return None, refused(payload)
    if message_id != 0x14:
        return None, {"result": "incomplete", "message_id": message_id}
    if args.raw_krb5:
        answer = payload
    else:
        fields = neg_token_resp_fields(payload)
        if fields.get(0) != b"\x00":
            return None, {"result": "incomplete", "negState": fields.get(0, b"").hex()}
        if fields.get(1) != der_oid(KRB5_MS_OID)[2:]:
            return None, {"result": "error", "error": "supportedMech " + fields.get(1, b"").hex()}
        answer = fields.get(2, b"")
    if answer and args.ms_inner_oid and answer[:2] == b"\x60" + answer[1:2]:
        # The acceptor answers under the OID it was given; MIT's initiator only knows the one it sent.
        tag, inner, _ = der_read(answer)
        oid_at = len(answer) - len(inner)
        if answer[oid_at : oid_at + 11] == der_oid(KRB5_MS_OID):
            answer = answer[:oid_at] + der_oid(KRB5_OID) + answer[oid_at + 11 :]
    if answer:
        ctx.step(answer)
    if not ctx.complete:
        return None, {"result": "incomplete"}
    return ctx, None



def krb5_second_choice(sock, args, ctx, token):
    """SPNEGO listing NTLM first (which the server does not offer here): the server picks Kerberos with request-mic,
    so both sides must exchange mechListMICs (RFC 4178 section 5), made with the Kerberos context."""
    mech_types = [NTLM_OID, KRB5_MS_OID, KRB5_OID]
    mech_types_der = der(0x30, b"".join(der_oid(m) for m in mech_types))
    send_handshake(sock, 0x16, der(0x60, der_oid(SPNEGO_OID) + der(0xA0, der(0x30, der(0xA0, mech_types_der)))))
    message_id, payload = read_handshake(sock)
    if message_id != 0x16:
        return None, refused(payload) if message_id == 0x15 else {"result": "closed"}
    fields = neg_token_resp_fields(payload)
    if fields.get(0) != b"\x03" or fields.get(1) != der_oid(KRB5_MS_OID)[2:]:
        return None, {"result": "error", "error": "expected request-mic for the Microsoft Kerberos OID: " + payload.hex()}
    send_handshake(sock, 0x16, neg_token_resp(response_token=token))
    message_id, payload = read_handshake(sock)
    if message_id != 0x16:
        return None, refused(payload) if message_id == 0x15 else {"result": "closed"}
    fields = neg_token_resp_fields(payload)
    ctx.step(fields[2])
    ctx.verify_signature(mech_types_der, fields[3])  # the acceptor's mechListMIC; raises when it does not verify
    mic = ctx.get_signature(mech_types_der)
    if args.tamper_mic:
        mic = mic[:-1] + bytes([mic[-1] ^ 1])
    send_handshake(sock, 0x16, neg_token_resp(mech_list_mic=mic))
    message_id, payload = read_handshake(sock)
    if message_id == 0x15:
        return None, refused(payload)
    if message_id != 0x14 or payload:
        return None, {"result": "incomplete", "message_id": message_id}
    return ctx, None
