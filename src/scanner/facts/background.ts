/**
 * Package facts of uploaded analyses, looked up after the upload has been answered. The upload queues
 * the packages the platform has no published versions for (store/package-facts-queue.ts) in the same
 * transaction that records the analysis; this loop claims a few at a time, reads each one's registry,
 * stores its versions (recomputing its facts) and takes it off the queue in one transaction. A restart
 * finds the queue where it was; replicas share it, each package claimed by one of them at a time.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Kysely } from "kysely";
import { loadPublishedVersionsOfPackages } from "../../domain/package-facts.ts";
import type { PublishedVersionInput } from "../../store/input-records.ts";
import {
  type ClaimedPackage,
  claimPackages,
  finishPackages,
  lockPackageWrites,
  postponePackage,
  releaseClaims,
} from "../../store/package-facts-queue.ts";
import type { Database } from "../../store/schema.ts";
import type { RegistryFetcher } from "../registry/cached-fetch.ts";
import type { VersionsLookup } from "./lookup.ts";

interface FactsWorkerOptions {
  fetcher: RegistryFetcher;
  npmRegistryUrl: string;
  mavenRepositoryUrl: string;
  /** How often the queue is looked at when nothing woke the loop (another replica's uploads). */
  pollMs?: number;
  /** How long a claim holds (a crashed claimer's packages are claimed again after it). */
  leaseMs?: number;
  /** Packages claimed (and stored) at once, and how many are looked up concurrently. */
  batch?: number;
  concurrency?: number;
  /** The wait before a failed lookup's first retry; each next one waits three times longer (up to 1 h). */
  firstRetryMs?: number;
  /** Lines for the service's log: postponed lookups (one line a batch), given-up packages, queue faults. */
  log?: (message: string) => void;
}

export interface FactsWorker {
  /** An upload queued packages: look now rather than at the next poll. */
  wake(): void;
  /** Resolves when the queue is empty as seen by this worker (tests, benchmarks). */
  drained(): Promise<void>;
  /** Finishes the packages in hand, hands back the claims, and stops. */
  stop(): Promise<void>;
}

/** After this many failed lookups a package is left without facts (its last error is logged). */
const MAX_ATTEMPTS = 8;
/** How long a stop waits for the lookups in flight. */
const STOP_WAIT_MS = 2_000;
/**
 * A registry that failed once (a timeout on a busy host, a 503) mostly answers seconds later: the first
 * retry comes soon, so the packages' factsPending ends soon; the next ones back off (5 s, 15 s, 45 s, ...,
 * at most an hour apart: about two hours in all before giving up) so a registry that is down is not hammered.
 */
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 3_600_000;

export function startFactsWorker(db: Kysely<Database>, options: FactsWorkerOptions): FactsWorker {
  const claimer = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  const pollMs = options.pollMs ?? 5_000;
  const leaseMs = options.leaseMs ?? 600_000;
  const firstRetryMs = options.firstRetryMs ?? FIRST_RETRY_MS;
  const retryDelayMs = (attempts: number) => Math.min(firstRetryMs * 3 ** attempts, MAX_RETRY_MS);
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  let idleWaiters: (() => void)[] = [];

  const sleep = () =>
    new Promise<void>((resolve) => {
      if (woken || stopped) {
        woken = false;
        resolve();
        return;
      }
      const timer = setTimeout(done, pollMs);
      timer.unref();
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        woken = false;
        resolve();
      }
      wakeUp = done;
    });

  // The registries' readers (Maven XML, OpenPGP) load with the first package to look up, not at start.
  const lookUp = async (p: ClaimedPackage): Promise<VersionsLookup> =>
    p.ecosystem === "npm"
      ? (await import("./npm.ts")).npmVersions(options.fetcher, options.npmRegistryUrl, p.name)
      : (await import("./maven.ts")).mavenVersions(options.fetcher, options.mavenRepositoryUrl, p.name);

  /** Looks up a claimed batch (bounded concurrency), then stores what came in one transaction. */
  const settle = async (claimed: readonly ClaimedPackage[]) => {
    const found: { packageId: number; versions: PublishedVersionInput[] }[] = [];
    const nothing: number[] = [];
    const postponed: string[] = [];
    const queue = [...claimed];
    const work = async () => {
      for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
        let lookup: VersionsLookup;
        try {
          lookup = await lookUp(p);
        } catch (error) {
          lookup = { kind: "failed", reason: (error as Error).message };
        }
        if (lookup.kind === "ok" && lookup.versions.length > 0) {
          found.push({ packageId: p.packageId, versions: lookup.versions });
        } else if (lookup.kind === "ok" || lookup.kind === "not-found") {
          // Not on the registry (a private package) or no version listed: nothing will come.
          nothing.push(p.packageId);
        } else {
          const reason = lookup.kind === "failed" ? lookup.reason : "not cached";
          if (p.attempts + 1 >= MAX_ATTEMPTS) {
            options.log?.(
              `facts of ${p.ecosystem}:${p.name} given up after ${MAX_ATTEMPTS} attempts: ${reason}`,
            );
            nothing.push(p.packageId);
          } else {
            const delay = retryDelayMs(p.attempts);
            await postponePackage(db, p.packageId, Date.now() + delay, reason);
            postponed.push(
              `${p.ecosystem}:${p.name} (attempt ${p.attempts + 1}, next in ${Math.round(delay / 1000)} s): ${reason}`,
            );
          }
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 16, queue.length) }, work));
    // One line a batch: a registry that is down fails every package of it alike.
    if (postponed.length > 0) {
      options.log?.(
        `facts of ${postponed.length} package(s) not looked up, retried later; first: ${postponed[0]}`,
      );
    }
    await db.transaction().execute(async (trx) => {
      await lockPackageWrites(trx, "exclusive");
      await loadPublishedVersionsOfPackages(trx, found);
      await finishPackages(trx, [...found.map((f) => f.packageId), ...nothing]);
    });
  };

  const loop = (async () => {
    while (!stopped) {
      let claimed: ClaimedPackage[] = [];
      try {
        claimed = await claimPackages(db, claimer, options.batch ?? 64, Date.now(), leaseMs);
        if (claimed.length > 0) await settle(claimed);
      } catch (error) {
        // The claims lapse and the packages are looked up again (a store that went away, a write that
        // failed): nothing is lost.
        if (!stopped) options.log?.(`package facts queue: ${(error as Error).message}`);
      }
      if (claimed.length === 0) {
        for (const resolve of idleWaiters) resolve();
        idleWaiters = [];
        await sleep();
      }
    }
  })();

  return {
    wake() {
      woken = true;
      wakeUp?.();
    },
    drained() {
      return new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        woken = true;
        wakeUp?.();
      });
    },
    async stop() {
      stopped = true;
      wakeUp?.();
      // A registry that does not answer must not hold the stop: what is still in flight after a moment is
      // handed back (another replica or the next start looks it up again; storing twice is harmless).
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([loop, new Promise((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)))]);
      clearTimeout(timer);
      for (const resolve of idleWaiters) resolve();
      await releaseClaims(db, claimer).catch(() => {});
    },
  };
}
