#!/usr/bin/env bash
# Tests deploy/wanrep-deploy without sshd:
#  1. inventory validation: bad inventories are refused with the error named;
#  2. dry run: every action against three remote hosts prints its plan (every host, the key
#     commands) and runs nothing (ssh, sudo, apt-get, tar... are shadowed by recorders);
#  3. for real, three sites on host `local` (na4 latency): init, start, status, conflicting updates
#     through every proxy with psql, check, add-site (a fourth under inserts), remove-site, check,
#     emulate, collect, stop.
# Everything it starts is stopped on exit, failure included. Run by `./wanrep test` after mvn verify.
#
# WANREP_DEPLOY_TEST_EMULATE=0 skips the emulate step (for development until `./wanrep emulate`
# exists); otherwise a missing emulate command fails the test.
# shellcheck disable=SC2015  # "A && B || fail" is meant: fail unless both hold
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEPLOY="$ROOT/deploy/wanrep-deploy"
PG_BIN="/usr/lib/postgresql/${WANREP_PG_MAJOR:-15}/bin"
PSQL="$(command -v psql || echo "$PG_BIN/psql")"
T0=$SECONDS

TMP="$(mktemp -d -t wanrep-deploy-test.XXXXXX)"
chmod 755 "$TMP"   # as root, PostgreSQL runs as user postgres and must reach the data directories
INV="$TMP/local.inventory"
SITES=(montreal boston chicago)
BG_PIDS=()

log() { printf '[deploy-test %3ds] %s\n' $((SECONDS - T0)) "$*"; }
fail() { log "FAIL: $*"; exit 1; }

cleanup() {
  local rc=$?
  set +e
  local p
  for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  if [ -f "$INV" ]; then
    "$DEPLOY" stop --inventory "$INV" >"$TMP/cleanup-stop.log" 2>&1
    [ ! -f "$TMP/ssh.inventory" ] || PATH="$TMP/ssh-bin:$PATH" "$DEPLOY" stop --inventory "$TMP/ssh.inventory" >>"$TMP/cleanup-stop.log" 2>&1
    # whatever stop could not stop: by pid file and data directory, never by name
    local s
    for s in montreal boston chicago berkeley viassh; do
      local d="$TMP/sites/$s"
      if [ -f "$d/middleware.pid" ]; then kill -9 "$(cat "$d/middleware.pid")" 2>/dev/null; fi
      if [ -f "$d/pgdata/postmaster.pid" ]; then
        if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$d/pgdata" -m immediate stop) >/dev/null 2>&1
        else "$PG_BIN/pg_ctl" -D "$d/pgdata" -m immediate stop >/dev/null 2>&1; fi
      fi
    done
  fi
  if [ "$rc" = 0 ]; then
    rm -rf "$TMP"
    log "PASS (deploy test, $((SECONDS - T0)) s)"
  else
    local keep="$ROOT/runs/deploy-test-failed"
    rm -rf "$keep"; mkdir -p "$keep"
    cp -r "$TMP/." "$keep/" 2>/dev/null
    rm -rf "$keep/sites"/*/pgdata/base "$keep/sites"/*/pgdata/pg_wal 2>/dev/null
    rm -rf "$TMP"
    log "FAILED (exit $rc); inventory, logs and outputs kept in $keep"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

contains() { # contains FILE TEXT...: every TEXT occurs in FILE
  local f="$1"; shift
  local t
  for t in "$@"; do grep -qF -- "$t" "$f" || fail "expected '$t' in $(basename "$f"):"$'\n'"$(head -c 4000 "$f")"; done
}

# ------------------------------------------------------------------ 1. validation

log "validation: bad inventories are refused"
refused() { # refused NAME EXPECTED_TEXT < inventory
  local f="$TMP/bad-$1.inventory"
  cat >"$f"
  if "$DEPLOY" validate --inventory "$f" >"$f.out" 2>&1; then fail "inventory '$1' was accepted:"$'\n'"$(cat "$f")"; fi
  contains "$f.out" "$2"
}
refused duplicate "duplicate site 'a'" <<'EOF'
a  h1 u 6543 7800 5432 /d/a
a  h2 u 6543 7800 5432 /d/a
EOF
refused badport "proxy_port '65536' is not a port" <<'EOF'
a  h1 u 65536 7800 5432 /d/a
EOF
refused fdsock "gcs_port+100 (FD_SOCK2) must be a port too" <<'EOF'
a  h1 u 6543 65500 5432 /d/a
EOF
refused clash "site b: gcs_port 7900 on host h1 is already gcs_port+100 of site a" <<'EOF'
a  h1 u 6543 7800 5432 /d/a
b  h1 u 6544 7900 5433 /d/b
EOF
refused samedir "data_dir /d/a on host h1 is already site a's" <<'EOF'
a  h1 u 6543 7800 5432 /d/a
b  h1 u 6544 7801 5433 /d/a
EOF
refused fields "a site line has 7 or 8 fields" <<'EOF'
a  h1 u 6543 7800 5432
EOF
refused relative "data_dir 'data/a' must be an absolute path" <<'EOF'
a  h1 u 6543 7800 5432 data/a
EOF
refused option "unknown option 'install_path'" <<'EOF'
option install_path=/opt/wanrep
a  h1 u 6543 7800 5432 /d/a
EOF
refused generated "set site.a.gcs.port: wanrep-deploy writes this from the site lines" <<'EOF'
set site.a.gcs.port=7000
a  h1 u 6543 7800 5432 /d/a
EOF
refused matrix "site paris is not in latency matrix na4" <<'EOF'
set latency_matrix=na4
paris  local - 6543 7800 5432 /d/a
EOF
refused mixed "host local among remote hosts needs an addr column" <<'EOF'
a  local - 6543 7800 5432 /d/a
b  h2    u 6543 7800 5432 /d/b
EOF
refused twice "set delivery given twice" <<'EOF'
set delivery=safe
set delivery=agreed
a  h1 u 6543 7800 5432 /d/a
EOF
"$DEPLOY" validate --inventory "$ROOT/deploy/inventory.example" >"$TMP/example.out" 2>&1 || fail "deploy/inventory.example is refused: $(cat "$TMP/example.out")"

# ------------------------------------------------------------------ 2. dry run

log "dry run: every action against three remote hosts prints its plan and runs nothing"
FAKE="$TMP/fake-bin"; mkdir -p "$FAKE"
for c in ssh scp rsync sudo apt-get runuser initdb pg_ctl tar mvn java psql; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/executed"\nexit 1\n' "$c" "$TMP" >"$FAKE/$c"
  chmod +x "$FAKE/$c"
done
cat >"$TMP/remote.inventory" <<'EOF'
option check_from=192.0.2.5/32
option install_dir=/opt/wanrep
set latency_matrix=none
set delivery=opt-safe
virginia   10.1.0.1  ubuntu  6543 7800 5432 /srv/wanrep/virginia
frankfurt  10.1.0.2  admin   6543 7800 5432 /srv/wanrep/frankfurt
singapore  10.1.0.3  -       6543 7800 5432 /srv/wanrep/singapore
EOF
dry() { # dry ACTION [args]: output in $TMP/dry-ACTION.out
  local a="$1"; shift
  PATH="$FAKE:$PATH" "$DEPLOY" "$a" --inventory "$TMP/remote.inventory" --dry-run "$@" >"$TMP/dry-$a.out" 2>&1 \
    || fail "dry run of $a failed: $(cat "$TMP/dry-$a.out")"
  if [ "$a" = check ]; then contains "$TMP/dry-$a.out" '"10.1.0.1"' '"10.1.0.2"' '"10.1.0.3"'   # check runs here
  else contains "$TMP/dry-$a.out" "[10.1.0.1]" "[10.1.0.2]" "[10.1.0.3]"; fi
}
dry install
contains "$TMP/dry-install.out" "apt-get install" "postgresql-15-wal2json" "maven" "openjdk-21-jdk-headless" \
  "--exclude=target" "--exclude=./.git" "--exclude=./runs" "tar -xzf - -C /opt/wanrep.new" "cd /opt/wanrep && ./wanrep setup"
dry init
contains "$TMP/dry-init.out" "/usr/lib/postgresql/15/bin/initdb -D /srv/wanrep/frankfurt/pgdata" "wal_level = logical" \
  "max_replication_slots = 20" "max_wal_senders = 20" "max_slot_wal_keep_size = '1GB'" "listen_addresses = '*'" \
  "host all postgres 192.0.2.5/32 trust" "sites=virginia,frankfurt,singapore" "delivery=opt-safe" \
  "site.singapore.gcs.host=10.1.0.3" "site.frankfurt.gcs.port=7800" "site.virginia.proxy.port=6543" \
  "site.virginia.postgres.port=5432" "cat > /srv/wanrep/virginia/wanrep.properties" \
  "site.virginia.gcs.secret_file=/srv/wanrep/virginia/gcs.secret" "cat > /srv/wanrep/frankfurt/gcs.secret) && chmod 600"
[ ! -e "$TMP/remote.inventory.gcs.secret" ] || fail "a dry run of init wrote the shared secret"
dry start
contains "$TMP/dry-start.out" "pg_ctl -D /srv/wanrep/virginia/pgdata -l /srv/wanrep/virginia/pgdata/server.log -w -t 60 start" \
  "./wanrep middleware --config /srv/wanrep/frankfurt/wanrep.properties --site frankfurt" \
  "echo \$! > /srv/wanrep/singapore/middleware.pid" "port_open 127.0.0.1 6543"
dry status
contains "$TMP/dry-status.out" "pg_ctl -D /srv/wanrep/singapore/pgdata status" "mw_alive /srv/wanrep/virginia virginia"
dry stop
contains "$TMP/dry-stop.out" "kill \"\$pid\"" "-m fast stop"
dry emulate --workload synthetic --rate 6 --transactions 50 --seed 3 --run r1
contains "$TMP/dry-emulate.out" \
  "./wanrep emulate --host 127.0.0.1 --port 6543 --site virginia --workload synthetic --rate 2 --transactions 50 --seed 3 --out /srv/wanrep/virginia/results/r1" \
  "--site frankfurt" "--site singapore"
dry collect --results "$TMP/dry-results"
contains "$TMP/dry-collect.out" "cd /srv/wanrep/frankfurt" "tar -czf -" "tar -xzf - -C $TMP/dry-results/frankfurt"
dry check --dir "$TMP/dry-check"
contains "$TMP/dry-check.out" '"name":"singapore","proxy_host":"10.1.0.3","proxy_port":6543,"pg_host":"10.1.0.3","pg_port":5432' \
  "$ROOT/wanrep cluster check --dir $TMP/dry-check"
dry destroy --yes
contains "$TMP/dry-destroy.out" "rm -rf /srv/wanrep/virginia" "rm -rf /srv/wanrep/singapore" "-m fast stop"
if "$DEPLOY" destroy --inventory "$TMP/remote.inventory" --dry-run >"$TMP/dry-destroy-noyes.out" 2>&1; then fail "destroy without --yes went ahead"; fi
contains "$TMP/dry-destroy-noyes.out" "add --yes"
[ ! -e "$TMP/executed" ] || fail "the dry run executed commands: $(cat "$TMP/executed")"
[ ! -e "$TMP/dry-results" ] && [ ! -e "$TMP/dry-check" ] || fail "the dry run wrote local files"

# ------------------------------------------------------------------ 3. three local sites

declare -A TAKEN
port_free() { ! (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { # a port nothing listens on, not handed out before (nor its +100 when asked)
  local p tries=0
  while :; do
    # below the kernel's ephemeral range (32768 up): an outgoing connection cannot take it before we bind
    p=$((20000 + RANDOM % 12000)); tries=$((tries + 1))
    [ "$tries" -lt 1000 ] || fail "no free port found"
    [ -z "${TAKEN[$p]+x}" ] && port_free "$p" || continue
    if [ "${1:-}" = gcs ]; then { [ -z "${TAKEN[$((p + 100))]+x}" ] && port_free $((p + 100)); } || continue; TAKEN[$((p + 100))]=1; fi
    TAKEN[$p]=1; echo "$p"; return
  done
}
declare -A PROXY PGPORT
{
  echo "# three sites on this machine, written by deploy/test/local-inventory-test.sh"
  echo "set latency_matrix=na4"
  echo "set cluster.name=wanrep-deploy-test-$$"
  echo "pgconf fsync=off"
  echo "pgconf shared_buffers=32MB"
  for s in "${SITES[@]}"; do
    PROXY[$s]="$(free_port)"; PGPORT[$s]="$(free_port)"
    echo "$s local - ${PROXY[$s]} $(free_port gcs) ${PGPORT[$s]} $TMP/sites/$s"
  done
} >"$INV"

log "dry run against host local creates nothing"
for a in init start stop; do
  PATH="$FAKE:$PATH" "$DEPLOY" "$a" --inventory "$INV" --dry-run >"$TMP/dry-local-$a.out" 2>&1 || fail "local dry run of $a: $(cat "$TMP/dry-local-$a.out")"
  contains "$TMP/dry-local-$a.out" "[local]"
done
[ ! -e "$TMP/sites" ] && [ ! -e "$TMP/executed" ] || fail "the local dry run created or executed something"

step() { # step NAME ACTION [args]: runs the action, output in $TMP/step-NAME.out (shown on failure)
  local name="$1"; shift
  log "$name"
  if ! "$DEPLOY" "$@" --inventory "$INV" >"$TMP/step-$name.out" 2>&1; then
    cat "$TMP/step-$name.out"; fail "wanrep-deploy $* failed"
  fi
}
step init init
for s in "${SITES[@]}"; do
  contains "$TMP/sites/$s/wanrep.properties" "sites=montreal,boston,chicago" "latency_matrix=na4" "site.$s.proxy.port=${PROXY[$s]}" \
    "site.$s.gcs.secret_file=$TMP/sites/$s/gcs.secret"
  # every site holds the one shared secret, readable by its owner only
  [ "$(stat -c %a "$TMP/sites/$s/gcs.secret")" = 600 ] || fail "$s: gcs.secret has mode $(stat -c %a "$TMP/sites/$s/gcs.secret")"
  [ "$(stat -c %a "$TMP/sites/$s/wanrep.properties")" = 600 ] || fail "$s: wanrep.properties has mode $(stat -c %a "$TMP/sites/$s/wanrep.properties")"
  cmp -s "$TMP/sites/$s/gcs.secret" "$INV.gcs.secret" || fail "$s: gcs.secret differs from the control host's"
done
step init-again init    # idempotent: keeps the data directories
contains "$TMP/step-init-again.out" "data directory exists, keeping it"
step start start
step start-again start  # idempotent: nothing started twice
contains "$TMP/step-start-again.out" "already running"
step status status
for s in "${SITES[@]}"; do contains "$TMP/step-status.out" "up :${PROXY[$s]}" "up :${PGPORT[$s]}"; done

sql() { # sql SITE SQL...: through the site's proxy
  local s="$1"; shift
  PGCONNECT_TIMEOUT=10 "$PSQL" -X -q -A -t -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${PROXY[$s]}" -U postgres -d postgres "$@"
}
log "writes through every proxy: conflicting counter increments from every site at once"
sql montreal -c "CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)" -c "INSERT INTO counter VALUES (1, 0)" \
  -c "CREATE TABLE hits (site text, i int, PRIMARY KEY (site, i))"
N=10
for s in "${SITES[@]}"; do
  (for i in $(seq 1 $N); do
     echo "UPDATE counter SET n = n + 1 WHERE id = 1;"
     echo "INSERT INTO hits VALUES ('$s', $i);"
   done | sql "$s" -f - >"$TMP/psql-$s.out" 2>&1) &
  BG_PIDS+=("$!")
done
for p in "${BG_PIDS[@]}"; do wait "$p" || fail "psql through a proxy failed: $(cat "$TMP"/psql-*.out)"; done
BG_PIDS=()
want=$((N * ${#SITES[@]}))
for s in "${SITES[@]}"; do   # every site applies every update; the others may trail the origin briefly
  for _ in $(seq 1 100); do
    got="$(sql "$s" -c "SELECT n || '/' || (SELECT count(*) FROM hits) FROM counter")"
    [ "$got" = "$want/$want" ] && break
    sleep 0.2
  done
  [ "$got" = "$want/$want" ] || fail "site $s: counter/hits $got, expected $want/$want"
done

step check check --dir "$TMP/check"
contains "$TMP/step-check.out" "all replicas identical"
contains "$TMP/check/cluster.json" "\"name\":\"boston\",\"proxy_host\":\"127.0.0.1\",\"proxy_port\":${PROXY[boston]}"

log "add-site: a fourth site (berkeley, na4's fourth) joins the running cluster while montreal takes inserts"
PROXY[berkeley]="$(free_port)"; PGPORT[berkeley]="$(free_port)"
echo "berkeley local - ${PROXY[berkeley]} $(free_port gcs) ${PGPORT[berkeley]} $TMP/sites/berkeley" >>"$INV"
(for i in $(seq 1 30); do echo "INSERT INTO hits VALUES ('during-add', $i);"; echo "SELECT pg_sleep(0.1);"; done \
   | sql montreal -f - >"$TMP/psql-during-add.out" 2>&1) &
BG_PIDS+=("$!")
step add-site add-site --site berkeley
for p in "${BG_PIDS[@]}"; do wait "$p" || fail "inserts during add-site failed: $(cat "$TMP/psql-during-add.out")"; done
BG_PIDS=()
for s in montreal boston chicago berkeley; do
  contains "$TMP/sites/$s/wanrep.properties" "sites=montreal,boston,chicago,berkeley" "site.berkeley.gcs.bootstrap=off"
done
want=$((N * 3 + 30))
for _ in $(seq 1 100); do got="$(sql berkeley -c "SELECT count(*) FROM hits")" && [ "$got" = "$want" ] && break; sleep 0.2; done
[ "$got" = "$want" ] || fail "berkeley: $got rows in hits, expected $want"
step check-four check --dir "$TMP/check-four"
contains "$TMP/step-check-four.out" "all replicas identical"
contains "$TMP/check-four/cluster.json" "\"name\":\"berkeley\""

log "remove-site: montreal, the first site (the default sequencer), leaves; the other three go on"
step remove-site remove-site --site montreal
contains "$TMP/step-remove-site.out" "middleware stopped at its removal"
# its name stays the sequencer setting, so every site, restarted or added later, names the same flush leader
contains "$INV" "set sequencer=montreal"
sed -i '/^montreal /d' "$INV"
SITES=(boston chicago berkeley)
for s in "${SITES[@]}"; do contains "$TMP/sites/$s/wanrep.properties" "sites=boston,chicago,berkeley" "sequencer=montreal"; done
"$DEPLOY" validate --inventory "$INV" >"$TMP/validate-after-remove.out" 2>&1 || fail "validate after remove-site: $(cat "$TMP/validate-after-remove.out")"
contains "$TMP/validate-after-remove.out" "sequencer=montreal"
sql chicago -c "INSERT INTO hits VALUES ('after-remove', 1)"
step check-three check --dir "$TMP/check-three"
contains "$TMP/step-check-three.out" "all replicas identical"

log "a crash: stop --only chicago --kill (kill -9 of its middleware), inserts elsewhere, start --only chicago"
step kill-chicago stop --only chicago --kill
contains "$TMP/step-kill-chicago.out" "site chicago: middleware killed (kill -9)"
for i in 1 2 3 4 5; do sql boston -c "INSERT INTO hits VALUES ('while-chicago-down', $i)"; done
step restart-chicago start --only chicago
for _ in $(seq 1 100); do got="$(sql chicago -c "SELECT count(*) FROM hits WHERE site = 'while-chicago-down'" 2>/dev/null)" && [ "$got" = 5 ] && break; sleep 0.2; done
[ "$got" = 5 ] || fail "chicago after its restart: $got of the 5 inserts made while it was down"
step check-after-crash check --dir "$TMP/check-after-crash"
contains "$TMP/step-check-after-crash.out" "all replicas identical"

log "a PostgreSQL crash: kill -9 of chicago's postmaster, an insert elsewhere (chicago's middleware stops), start --only chicago"
kill -9 "$(head -n 1 "$TMP/sites/chicago/pgdata/postmaster.pid")"
sql boston -c "INSERT INTO hits VALUES ('while-chicago-pg-down', 1)"
for _ in $(seq 1 150); do kill -0 "$(cat "$TMP/sites/chicago/middleware.pid")" 2>/dev/null || break; sleep 0.2; done
kill -0 "$(cat "$TMP/sites/chicago/middleware.pid")" 2>/dev/null && fail "chicago's middleware kept running without its PostgreSQL"
step restart-chicago-pg start --only chicago
contains "$TMP/step-restart-chicago-pg.out" "site chicago: PostgreSQL started"
for _ in $(seq 1 100); do got="$(sql chicago -c "SELECT count(*) FROM hits WHERE site = 'while-chicago-pg-down'" 2>/dev/null)" && [ "$got" = 1 ] && break; sleep 0.2; done
[ "$got" = 1 ] || fail "chicago after its PostgreSQL's restart: $got of the insert made while it was down"
step check-after-pg-crash check --dir "$TMP/check-after-pg-crash"
contains "$TMP/step-check-after-pg-crash.out" "all replicas identical"

EMULATED=0
if [ "${WANREP_DEPLOY_TEST_EMULATE:-1}" = 0 ]; then
  log "emulate: SKIPPED because WANREP_DEPLOY_TEST_EMULATE=0"
else
  # (picocli answers `wanrep NOSUCHCOMMAND --help` with the top-level usage and exit 0)
  if ! "$ROOT/wanrep" emulate --help >"$TMP/emulate-help.out" 2>&1 || ! grep -q '^Usage: wanrep emulate' "$TMP/emulate-help.out"; then
    fail "'./wanrep emulate' does not exist yet (its --help is not the emulate command's), so the emulate action cannot be tested.
$(head -n 3 "$TMP/emulate-help.out")
Set WANREP_DEPLOY_TEST_EMULATE=0 to skip this one step until the command lands."
  fi
  missing=""
  for o in --host --port --site --workload --rate --transactions --seed --out; do
    grep -qF -- "$o" "$TMP/emulate-help.out" || missing+=" $o"
  done
  [ -z "$missing" ] || fail "'./wanrep emulate' lacks option(s)$missing that the emulate action passes (deploy/wanrep-deploy act_emulate)"
  step emulate emulate --workload synthetic --rate 6 --transactions 12 --seed 7 --run test-run
  EMULATED=1
fi

step collect collect --results "$TMP/results"
for s in "${SITES[@]}"; do
  r="$TMP/results/$s"
  [ -s "$r/logs/middleware.log" ] && [ -s "$r/wanrep.properties" ] && [ -s "$r/pgdata/server.log" ] \
    || fail "collect: files of site $s missing: $(cd "$TMP/results" && find . | head -20)"
  contains "$r/logs/middleware.log" "wanrep site $s: ready"
  if [ "$EMULATED" = 1 ]; then
    [ -n "$(find "$r/results/test-run" -type f ! -name emulate.log 2>/dev/null)" ] || fail "collect: no emulator results from site $s"
  fi
done

MW_PIDS=()
for s in "${SITES[@]}"; do MW_PIDS+=("$(cat "$TMP/sites/$s/middleware.pid")"); done
step stop stop
for p in "${MW_PIDS[@]}"; do ! kill -0 "$p" 2>/dev/null || fail "middleware pid $p still running after stop"; done
for s in "${SITES[@]}"; do
  port_free "${PROXY[$s]}" && port_free "${PGPORT[$s]}" || fail "site $s: a port is still open after stop"
done
step stop-again stop    # idempotent
if "$DEPLOY" status --inventory "$INV" >"$TMP/status-stopped.out" 2>&1; then fail "status says up after stop"; fi
contains "$TMP/status-stopped.out" "DOWN" "not running"
step destroy destroy --yes
[ ! -e "$TMP/sites/chicago" ] || fail "destroy left $TMP/sites/chicago"

# ------------------------------------------------------------------ 4. the ssh path

# No sshd here: an `ssh` stand-in runs the command it is given with /bin/sh -c, as the remote
# login shell would (dash on Debian), so the quoting for the remote shell and the tar streams
# over ssh's stdin/stdout are exercised; one site on "host" 127.0.0.1.
log "ssh path: one site through an ssh stand-in (init, start, status, collect, stop, destroy)"
mkdir -p "$TMP/ssh-bin"
cat >"$TMP/ssh-bin/ssh" <<EOF
#!/bin/sh
# ssh [options] target command: record the call, run the command with sh -c
while [ \$# -gt 1 ]; do
  case "\$1" in
    -[oiplFJ]) shift 2 ;;
    -*) shift ;;
    *) echo "\$1" >>"$TMP/ssh-targets"; shift; break ;;
  esac
done
cd "$TMP" && exec sh -c "\$1"
EOF
chmod +x "$TMP/ssh-bin/ssh"
{
  echo "option install_dir=$ROOT"
  echo "option ssh_opts=-o BatchMode=yes -i /nonexistent/key"
  echo "set cluster.name=wanrep-deploy-ssh-test-$$"
  echo "pgconf fsync=off"
  echo "viassh 127.0.0.1 admin $(free_port) $(free_port gcs) $(free_port) $TMP/sites/viassh"
} >"$TMP/ssh.inventory"
sshstep() { # sshstep NAME ACTION [args]
  local name="$1"; shift
  log "ssh path: $name"
  if ! PATH="$TMP/ssh-bin:$PATH" "$DEPLOY" "$@" --inventory "$TMP/ssh.inventory" >"$TMP/ssh-$name.out" 2>&1; then
    cat "$TMP/ssh-$name.out"; fail "wanrep-deploy $* (through ssh) failed"
  fi
}
sshstep init init
sshstep start start
sshstep status status
contains "$TMP/ssh-status.out" "viassh" "up :"
sshstep collect collect --results "$TMP/ssh-results"
contains "$TMP/ssh-results/viassh/logs/middleware.log" "wanrep site viassh: ready"
sshstep stop stop
sshstep destroy destroy --yes
[ ! -e "$TMP/sites/viassh" ] || fail "destroy (through ssh) left $TMP/sites/viassh"
contains "$TMP/ssh-targets" "admin@127.0.0.1"
