import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A lock on one entry of a cache outside the repository (~/.cache/imaging-ci), held while it is built:
 * test files run in parallel (test/support/run-suite.ts) and on a fresh machine two of them may need the
 * same entry at once. The lock is a directory (mkdir is atomic) holding the owner's pid; a lock whose
 * owner is gone (a killed run) is taken over. Builders check for the finished entry again once they hold
 * the lock, since another process may have built it meanwhile.
 */
const POLL_MS = 250;

function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock, { recursive: false });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    if (ownerAlive(lock)) return false;
    rmSync(lock, { recursive: true, force: true });
    return tryLock(lock);
  }
  writeFileSync(`${lock}/pid`, String(process.pid));
  return true;
}

function ownerAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(`${lock}/pid`, "utf8"));
  } catch {
    return true; // just created, its pid not written yet
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Runs `build` holding the lock `${entry}.lock`, waiting (blocking) while another process holds it. */
export function withCacheLockSync<T>(entry: string, build: () => T): T {
  const lock = `${entry}.lock`;
  mkdirSync(dirname(entry), { recursive: true });
  const wait = new Int32Array(new SharedArrayBuffer(4));
  while (!tryLock(lock)) Atomics.wait(wait, 0, 0, POLL_MS);
  try {
    return build();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Runs `build` holding the lock `${entry}.lock`, waiting while another process holds it. */
export async function withCacheLock<T>(entry: string, build: () => Promise<T>): Promise<T> {
  const lock = `${entry}.lock`;
  mkdirSync(dirname(entry), { recursive: true });
  while (!tryLock(lock)) await sleep(POLL_MS);
  try {
    return await build();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
