#!/bin/bash
# A throwaway Samba Active Directory domain for the tests: realm SAMDOM.TEST, NetBIOS domain SAMDOM, DC "dc1",
# provisioned into a folder with `samba-tool domain provision` and run by `samba` inside a network namespace of its
# own (veth pair 10.213.N.1 host side / 10.213.N.2 DC side), so its fixed ports (53, 88, 135, 389, 445, 464, 636,
# 3268, ...) clash neither with the host nor with the MIT test realm (../shared/tools/krb5-test-realm.sh listens on
# 127.0.0.1 at a free port) nor with another run of this script. Nothing under /etc changes. Needs root (ip netns).
# test/support/negotiate/samba-ad.ts drives it; the accounts below are its contract.
#
#   samba-ad.sh provision TEMPLATE          a provisioned domain with the accounts below, DC stopped (~5 s)
#   samba-ad.sh start TEMPLATE RUN [OWNER]  copy TEMPLATE to RUN, start the DC in its own namespace, write RUN/env.sh;
#                                           OWNER: a pid whose death lets a later start reclaim this run's slot
#   samba-ad.sh join RUN                    this host joins the domain as member BRIDGEHOST (net ads join) and runs
#                                           winbindd for it (all state in RUN/member, socket RUN/member/run/winbindd)
#   samba-ad.sh stop RUN                    stops winbindd and the DC, removes the namespace and RUN
#
# Accounts (passwords never expire, except where said):
#   Administrator / Admin-Pass1            domain admin (joins the member)
#   alice / Alice-Pass1                    member of idb-team; idb-team is a member of idb-readers, which is a member
#                                          of the universal group idb-all (nested twice)
#   bob / Bob-Pass1                        member of idb-writers, a domain local group
#   carol / Carol-Pass1                    disabled
#   dave / Dave-Pass1                      password expired (pwdLastSet = 0: must change at next logon)
#   svc-idb / Svc-Idb-Pass1                service account of the bridge: SPN host/idb.samdom.test, AES256, AES128 and
#                                          RC4 keys (msDS-SupportedEncryptionTypes 28); keytab TEMPLATE/idb.keytab
#   svc-legacy / Svc-Legacy-Pass1          SPN host/legacy.samdom.test, RC4 only (msDS-SupportedEncryptionTypes 4):
#                                          RC4 tickets; keytab TEMPLATE/legacy.keytab
set -euo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

REALM=SAMDOM.TEST
DOMAIN=SAMDOM
BASE_DN=DC=samdom,DC=test
ADMIN_PASS=Admin-Pass1
SUBNET_PREFIX=10.213
# The provisioned template names this address; `start` rewrites it to the run's own.
TEMPLATE_IP=$SUBNET_PREFIX.0.2

die() { echo "samba-ad.sh: $*" >&2; exit 1; }

provision() {
  local dir=$1
  [[ -e $dir ]] && die "$dir exists"
  mkdir -p "$dir/dc/run"
  : > "$dir/empty.conf"
  local dc=$dir/dc
  # -s empty.conf: nothing from /etc/samba/smb.conf leaks into the domain's configuration.
  samba-tool domain provision -s "$dir/empty.conf" --realm=$REALM --domain=$DOMAIN --server-role=dc \
    --dns-backend=SAMBA_INTERNAL --adminpass="$ADMIN_PASS" --targetdir="$dc" --host-name=dc1 --host-ip=$TEMPLATE_IP \
    --option="interfaces=$TEMPLATE_IP" --option="bind interfaces only=yes" \
    --option="pid directory=$dc/run" --option="ncalrpc dir=$dc/run/ncalrpc" \
    --option="winbindd socket directory=$dc/run/winbindd" --option="ntp signd socket directory=$dc/run/ntp_signd" \
    --option="log file=$dc/log" --option="dns forwarder=" \
    --option="server services=-nbt -wrepl -drepl -kcc -ntp_signd -dnsupdate" >"$dir/provision.log" 2>&1 \
    || { cat "$dir/provision.log" >&2; die "provision failed"; }
  local conf=$dc/etc/smb.conf
  local H=(-H "$dc/private/sam.ldb" -s "$conf")
  # A template may be reused for weeks: no password may expire by age.
  samba-tool domain passwordsettings set --max-pwd-age=0 --min-pwd-age=0 "${H[@]}" >/dev/null
  samba-tool user create alice Alice-Pass1 "${H[@]}" >/dev/null
  samba-tool user create bob Bob-Pass1 "${H[@]}" >/dev/null
  samba-tool user create carol Carol-Pass1 "${H[@]}" >/dev/null
  samba-tool user disable carol "${H[@]}" >/dev/null
  samba-tool user create dave Dave-Pass1 "${H[@]}" >/dev/null
  samba-tool user create svc-idb Svc-Idb-Pass1 "${H[@]}" >/dev/null
  samba-tool user create svc-legacy Svc-Legacy-Pass1 "${H[@]}" >/dev/null
  samba-tool group add idb-team "${H[@]}" >/dev/null
  samba-tool group add idb-readers "${H[@]}" >/dev/null
  samba-tool group add idb-all --group-scope=Universal "${H[@]}" >/dev/null
  samba-tool group add idb-writers --group-scope=Domain "${H[@]}" >/dev/null
  samba-tool group addmembers idb-team alice "${H[@]}" >/dev/null
  samba-tool group addmembers idb-readers idb-team "${H[@]}" >/dev/null
  samba-tool group addmembers idb-all idb-readers "${H[@]}" >/dev/null
  samba-tool group addmembers idb-writers bob "${H[@]}" >/dev/null
  samba-tool spn add host/idb.samdom.test svc-idb "${H[@]}" >/dev/null
  samba-tool spn add host/legacy.samdom.test svc-legacy "${H[@]}" >/dev/null
  ldbmodify -H "$dc/private/sam.ldb" >/dev/null <<EOF
dn: CN=svc-idb,CN=Users,$BASE_DN
changetype: modify
replace: msDS-SupportedEncryptionTypes
msDS-SupportedEncryptionTypes: 28

dn: CN=svc-legacy,CN=Users,$BASE_DN
changetype: modify
replace: msDS-SupportedEncryptionTypes
msDS-SupportedEncryptionTypes: 4

dn: CN=dave,CN=Users,$BASE_DN
changetype: modify
replace: pwdLastSet
pwdLastSet: 0
EOF
  samba-tool domain exportkeytab "$dir/idb.keytab" --principal=host/idb.samdom.test -s "$conf" >/dev/null 2>&1
  samba-tool domain exportkeytab "$dir/legacy.keytab" --principal=host/legacy.samdom.test -s "$conf" >/dev/null 2>&1
  chmod 600 "$dir/idb.keytab" "$dir/legacy.keytab"
  ldbsearch -H "$dc/private/sam.ldb" -b "$BASE_DN" -s base objectSid 2>/dev/null | sed -n 's/^objectSid: //p' > "$dir/domain-sid"
  rm -f "$dc/log"
}

# The slot's registry: /run/samba-ad/<netns> holds "RUN OWNER" for a later start to reclaim a dead owner's slot.
SLOTS=/run/samba-ad

reclaim_stale() {
  mkdir -p $SLOTS
  local f run owner
  for f in "$SLOTS"/sad*; do
    [[ -e $f ]] || continue
    read -r run owner < "$f" || continue
    if [[ -n ${owner:-} ]] && ! kill -0 "$owner" 2>/dev/null; then
      echo "samba-ad.sh: reclaiming $(basename "$f") of dead owner $owner ($run)" >&2
      stop "$run" || true
      ip netns del "$(basename "$f")" 2>/dev/null || true
      rm -f "$f"
    fi
  done
}

# DIR/wrapper.env: the environment (one VAR=value a line) that preloads nss_wrapper with copies of the host's passwd
# and group, a hosts file naming the DC (IP), and points libwbclient at the winbindd socket directory SOCKDIR.
nss_wrapper_env() {
  local dir=$1 dc_ip=$2 sockdir=$3 wrapper
  wrapper=$(ls /usr/lib/*/libnss_wrapper.so /usr/lib/libnss_wrapper.so 2>/dev/null | head -1 || true)
  [[ -n $wrapper ]] || die "libnss_wrapper.so not found (Debian package libnss-wrapper)"
  cp /etc/passwd "$dir/passwd"
  cp /etc/group "$dir/group"
  printf '%s dc1.samdom.test dc1\n' "$dc_ip" > "$dir/hosts"
  cat > "$dir/wrapper.env" <<EOF
LD_PRELOAD=$wrapper
NSS_WRAPPER_PASSWD=$dir/passwd
NSS_WRAPPER_GROUP=$dir/group
NSS_WRAPPER_HOSTS=$dir/hosts
SELFTEST_WINBINDD_SOCKET_DIR=$sockdir
EOF
}

start() {
  local template=$1 run=$2 owner=${3:-}
  [[ -d $template/dc ]] || die "no template at $template"
  reclaim_stale
  mkdir -p "$run"
  cp -a "$template/." "$run/"
  local n ns=""
  for n in $(seq 1 250); do
    if ip netns add "sad$n" 2>/dev/null; then ns=sad$n; break; fi
  done
  [[ -n $ns ]] || die "no free network namespace slot"
  echo "$run ${owner}" > "$SLOTS/$ns"
  echo "$ns" > "$run/netns"
  local host_ip=$SUBNET_PREFIX.$n.1 dc_ip=$SUBNET_PREFIX.$n.2
  ip link del "${ns}h" 2>/dev/null || true
  ip link add "${ns}h" type veth peer name "${ns}d" netns "$ns"
  ip addr add "$host_ip/30" dev "${ns}h"
  ip link set "${ns}h" up
  ip -n "$ns" addr add "$dc_ip/30" dev "${ns}d"
  ip -n "$ns" link set "${ns}d" up
  ip -n "$ns" link set lo up
  local conf=$run/dc/etc/smb.conf provisioned
  # The folder the template was provisioned in (it may have been renamed since): smb.conf names it.
  provisioned=$(sed -n 's#^[[:space:]]*private dir = \(.*\)/dc/private$#\1#p' "$conf")
  [[ -n $provisioned ]] || die "cannot read the private dir of $conf"
  sed -i -e "s#$provisioned/#$run/#g" -e "s#= $TEMPLATE_IP\$#= $dc_ip#" "$conf"
  mkdir -p "$run/dc/run"
  # smbd reaches the DC's own winbindd (SID to uid mapping for every session) through libwbclient, which knows only
  # the compiled-in socket directory, unless nss_wrapper is preloaded: then SELFTEST_WINBINDD_SOCKET_DIR (Samba's
  # selftest hook) points it at this run's. So the DC runs under nss_wrapper, with copies of the host's passwd/group.
  nss_wrapper_env "$run/dc" "$dc_ip" "$run/dc/run/winbindd"
  local -a denv
  mapfile -t denv < "$run/dc/wrapper.env"
  env "${denv[@]}" ip netns exec "$ns" samba -s "$conf" -D
  local i
  for i in $(seq 1 300); do
    if (: > "/dev/tcp/$dc_ip/88") 2>/dev/null && (: > "/dev/tcp/$dc_ip/389") 2>/dev/null \
      && (: > "/dev/tcp/$dc_ip/445") 2>/dev/null && (: > "/dev/tcp/$dc_ip/636") 2>/dev/null; then
      break
    fi
    sleep 0.05
  done
  ((i < 300)) || { tail -50 "$run/dc/log" >&2 || true; die "samba did not start listening on $dc_ip"; }
  # Clients on the host: AES (the default) and a configuration that asks for RC4 only.
  local kdc="    $REALM = {
        kdc = $dc_ip
        admin_server = $dc_ip
    }"
  local common="    default_realm = $REALM
    dns_lookup_realm = false
    dns_lookup_kdc = false
    rdns = false
    dns_canonicalize_hostname = false
    udp_preference_limit = 1"
  printf '[libdefaults]\n%s\n[realms]\n%s\n[domain_realm]\n    .samdom.test = %s\n    samdom.test = %s\n' \
    "$common" "$kdc" $REALM $REALM > "$run/krb5.conf"
  printf '[libdefaults]\n%s\n    default_tkt_enctypes = arcfour-hmac\n    default_tgs_enctypes = arcfour-hmac\n    permitted_enctypes = arcfour-hmac aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96\n[realms]\n%s\n[domain_realm]\n    .samdom.test = %s\n    samdom.test = %s\n' \
    "$common" "$kdc" $REALM $REALM > "$run/krb5-rc4.conf"
  cat > "$run/env.sh" <<EOF
export SAMBA_AD_NETNS=$ns
export SAMBA_AD_HOST_IP=$host_ip
export SAMBA_AD_DC_IP=$dc_ip
export SAMBA_AD_DOMAIN_SID=$(cat "$run/domain-sid")
export KRB5_CONFIG=$run/krb5.conf
EOF
  echo "$dc_ip"
}

join() {
  local run=$1
  # shellcheck disable=SC1091
  source "$run/env.sh"
  local m=$run/member
  mkdir -p "$m/private" "$m/lock" "$m/state" "$m/cache" "$m/run/winbindd" "$m/run/ncalrpc"
  chmod 755 "$m/run/winbindd"
  cat > "$m/smb.conf" <<EOF
[global]
	workgroup = $DOMAIN
	realm = $REALM
	netbios name = BRIDGEHOST
	security = ads
	password server = $SAMBA_AD_DC_IP
	interfaces = $SAMBA_AD_HOST_IP
	bind interfaces only = yes
	disable netbios = yes
	kerberos method = secrets only
	idmap config * : backend = tdb
	idmap config * : range = 3000-7999
	idmap config $DOMAIN : backend = rid
	idmap config $DOMAIN : range = 10000-999999
	winbind use default domain = no
	winbind offline logon = no
	winbind enum users = no
	winbind enum groups = no
	private dir = $m/private
	lock directory = $m/lock
	state directory = $m/state
	cache directory = $m/cache
	pid directory = $m/run
	ncalrpc dir = $m/run/ncalrpc
	winbindd socket directory = $m/run/winbindd
	log file = $m/log.%m
	max log size = 10000
EOF
  # The member side finds the DC by name (dc1.samdom.test), and the tests reach its winbindd through libwbclient's
  # selftest hook (SELFTEST_WINBINDD_SOCKET_DIR, honoured when nss_wrapper is preloaded): nss_wrapper with copies of
  # the host's passwd and group and a hosts file naming the DC, for every member-side process (net, winbindd, wbinfo,
  # ntlm_auth). A production member finds its DCs through DNS and winbindd listens on its default socket.
  nss_wrapper_env "$m" "$SAMBA_AD_DC_IP" "$m/run/winbindd"
  local -a wenv
  mapfile -t wenv < "$m/wrapper.env"
  env "${wenv[@]}" net ads join -s "$m/smb.conf" -S dc1.samdom.test -U "Administrator%$ADMIN_PASS" --no-dns-updates >"$m/join.log" 2>&1 \
    || { cat "$m/join.log" >&2; die "net ads join failed"; }
  env "${wenv[@]}" winbindd -s "$m/smb.conf" -D
  cat >> "$run/env.sh" <<EOF
export SAMBA_AD_MEMBER_CONF=$m/smb.conf
export SAMBA_AD_MEMBER_ENV=$m/wrapper.env
EOF
  local i
  for i in $(seq 1 200); do
    if env "${wenv[@]}" wbinfo --ping-dc >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.1
  done
  tail -30 "$m/log.winbindd" >&2 || true
  die "winbindd did not reach the domain controller"
}

stop_pidfile() {
  local file=$1 pid i
  [[ -f $file ]] || return 0
  pid=$(cat "$file" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ ]] && ((pid > 1)) || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
  kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

stop() {
  local run=$1 ns=""
  [[ -d $run ]] || return 0
  stop_pidfile "$run/member/run/winbindd.pid"
  stop_pidfile "$run/dc/run/samba.pid"
  [[ -f $run/netns ]] && ns=$(cat "$run/netns")
  if [[ -n $ns ]]; then
    ip netns del "$ns" 2>/dev/null || true
    ip link del "${ns}h" 2>/dev/null || true
    rm -f "$SLOTS/$ns"
  fi
  rm -rf "$run"
}

cmd=${1:-}
shift || true
case $cmd in
  provision) provision "$@" ;;
  start) start "$@" ;;
  join) join "$@" ;;
  stop) stop "$@" ;;
  *) die "usage: samba-ad.sh provision TEMPLATE | start TEMPLATE RUN [OWNER_PID] | join RUN | stop RUN" ;;
esac
