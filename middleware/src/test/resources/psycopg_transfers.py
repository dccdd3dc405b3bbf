"""Transfers between accounts with psycopg 3, as an application would write them: one connection per client,
autocommit off (psycopg opens a transaction at the first statement), parameters bound by the server (the extended
protocol), a retry on serialization failures and deadlocks. Clients at every site given, at once.

Usage: psycopg_transfers.py --ports P1,P2,P3 --clients-per-site N --seconds S --accounts A --seed SEED
Prints one JSON line: committed transfers, retries, and failures (other errors) per site.
"""
import argparse
import json
import random
import threading
import time

import psycopg
from psycopg import errors

RETRY = (errors.SerializationFailure, errors.DeadlockDetected)


def client(port, seed, deadline, accounts, out, lock):
    rnd = random.Random(seed)
    done = retries = failed = 0
    errs = {}
    with psycopg.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres", connect_timeout=10) as conn:
        while time.time() < deadline:
            a, b = rnd.sample(range(1, accounts + 1), 2)
            amount = rnd.randint(1, 50)
            for attempt in range(20):
                try:
                    with conn.cursor() as cur:
                        cur.execute("SELECT balance FROM accounts WHERE id = %s", (a,))
                        (balance,) = cur.fetchone()
                        cur.execute("UPDATE accounts SET balance = balance - %s WHERE id = %s", (amount, a))
                        cur.execute("UPDATE accounts SET balance = balance + %s WHERE id = %s", (amount, b))
                        cur.execute("INSERT INTO transfers (src, dst, amount, seen) VALUES (%s, %s, %s, %s) RETURNING id",
                                    (a, b, amount, balance))
                        cur.fetchone()
                    conn.commit()
                    done += 1
                    break
                except RETRY:
                    conn.rollback()
                    retries += 1
                except psycopg.Error as e:
                    conn.rollback()
                    failed += 1
                    key = "%s: %s" % (e.sqlstate, str(e).splitlines()[0][:120])
                    errs[key] = errs.get(key, 0) + 1
                    break
    with lock:
        s = out.setdefault(str(port), {"committed": 0, "retries": 0, "failed": 0, "errors": {}})
        s["committed"] += done
        s["retries"] += retries
        s["failed"] += failed
        for k, v in errs.items():
            s["errors"][k] = s["errors"].get(k, 0) + v


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ports", required=True)
    p.add_argument("--clients-per-site", type=int, default=2)
    p.add_argument("--seconds", type=float, default=8)
    p.add_argument("--accounts", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    deadline = time.time() + args.seconds
    out, lock, threads = {}, threading.Lock(), []
    for i, port in enumerate(int(x) for x in args.ports.split(",")):
        for c in range(args.clients_per_site):
            t = threading.Thread(target=client, args=(port, args.seed * 1000 + i * 100 + c, deadline, args.accounts, out, lock))
            t.start()
            threads.append(t)
    for t in threads:
        t.join()
    print(json.dumps({"psycopg": psycopg.__version__, "sites": out}))


if __name__ == "__main__":
    main()
