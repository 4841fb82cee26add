import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CURRENT_PARAMETERS,
  generatePassword,
  hashParameters,
  hashPassword,
  MIN_PASSWORD_LENGTH,
  needsRehash,
  passwordProblem,
  verifyPassword,
} from "../../../src/domain/passwords.ts";

const PASSWORD = "correct horse battery staple";

/** Changes one character of the base64url field `index` of an encoded hash. */
function tamper(encoded: string, index: number): string {
  const parts = encoded.split("$");
  const field = parts[index] as string;
  const first = field[0] === "A" ? "B" : "A";
  parts[index] = first + field.slice(1);
  return parts.join("$");
}

describe("password hashing", () => {
  it("round-trips: the password verifies against its own hash", async () => {
    const encoded = await hashPassword(PASSWORD);
    assert.equal(await verifyPassword(PASSWORD, encoded), true);
  });

  it("refuses a wrong password, including a change of case or a trailing space", async () => {
    const encoded = await hashPassword(PASSWORD);
    assert.equal(await verifyPassword("correct horse battery stapler", encoded), false);
    assert.equal(await verifyPassword(PASSWORD.toUpperCase(), encoded), false);
    assert.equal(await verifyPassword(`${PASSWORD} `, encoded), false);
    assert.equal(await verifyPassword("", encoded), false);
  });

  it("is self-describing: scrypt$N$r$p$salt$hash with base64url salt (16 bytes) and hash (32 bytes)", async () => {
    const encoded = await hashPassword(PASSWORD);
    const match = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/.exec(encoded);
    assert.ok(match, encoded);
    const [, n, r, p, salt, hash] = match as unknown as string[];
    assert.equal(Number(n), 2 ** 15);
    assert.ok(Number(n) >= 2 ** 15);
    assert.equal(Number(r), 8);
    assert.equal(Number(p), 1);
    assert.equal(Buffer.from(salt as string, "base64url").length, 16);
    assert.ok(Buffer.from(hash as string, "base64url").length >= 32);
    assert.deepEqual(hashParameters(encoded), { ...CURRENT_PARAMETERS });
  });

  it("salts every hash: the same password hashes differently each time", async () => {
    const [a, b] = await Promise.all([hashPassword(PASSWORD), hashPassword(PASSWORD)]);
    assert.notEqual(a, b);
    assert.notEqual(a.split("$")[4], b.split("$")[4]);
  });

  it("normalizes Unicode: composed and decomposed forms of the same password match", async () => {
    const composed = "caf\u00e9-au-lait-2024";
    const decomposed = "cafe\u0301-au-lait-2024";
    const encoded = await hashPassword(composed);
    assert.equal(await verifyPassword(decomposed, encoded), true);
  });

  it("never matches a tampered hash, and never throws on one", async () => {
    const encoded = await hashPassword(PASSWORD);
    const tampered = [
      tamper(encoded, 5), // hash bytes
      tamper(encoded, 4), // salt
      encoded.replace(/^scrypt\$32768\$/, "scrypt$16384$"), // cost lowered
      encoded.replace(/\$8\$1\$/, "$8$2$"), // parallelism changed
      encoded.replace(/^scrypt/, "bcrypt"),
      encoded.replace(/^scrypt\$32768/, "scrypt$30000"), // N not a power of two
      encoded.replace(/^scrypt\$32768/, "scrypt$1073741824"), // N far above the allowed bound
      encoded.slice(0, -4), // truncated hash
      `${encoded}$extra`,
      encoded.split("$").slice(0, 5).join("$"),
      encoded.replace(/\$([^$]+)$/, "$!!not-base64!!"),
      "",
      "plain-text-password",
    ];
    for (const value of tampered) {
      assert.equal(await verifyPassword(PASSWORD, value), false, value);
    }
  });

  it("takes the parameters from the hash, so older hashes still verify", async () => {
    // A hash made with N = 2^14, computed the way an older version would have.
    const { scryptSync } = await import("node:crypto");
    const salt = Buffer.alloc(16, 7);
    const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** 14, r: 8, p: 1 });
    const older = `scrypt$16384$8$1$${salt.toString("base64url")}$${key.toString("base64url")}`;
    assert.equal(await verifyPassword(PASSWORD, older), true);
    assert.equal(await verifyPassword("something else entirely", older), false);
    assert.equal(needsRehash(older), true);
  });

  it("verifies against a dummy hash when there is no hash (unknown user), in comparable time", async () => {
    const encoded = await hashPassword(PASSWORD);
    assert.equal(await verifyPassword(PASSWORD, undefined), false);
    const time = async (run: () => Promise<unknown>) => {
      const start = process.hrtime.bigint();
      await run();
      return Number(process.hrtime.bigint() - start) / 1e6;
    };
    const known = await time(() => verifyPassword("wrong password here", encoded));
    const unknown = await time(() => verifyPassword("wrong password here", undefined));
    // Both run scrypt with the same parameters: the unknown user is not answered noticeably faster.
    assert.ok(unknown > known / 3, `unknown user ${unknown} ms vs known user ${known} ms`);
  });
});

describe("needsRehash", () => {
  it("is false for a hash made with the current parameters", async () => {
    assert.equal(needsRehash(await hashPassword(PASSWORD)), false);
  });

  it("is true for other parameters or an unreadable hash", async () => {
    const encoded = await hashPassword(PASSWORD);
    assert.equal(needsRehash(encoded.replace(/^scrypt\$32768\$/, "scrypt$16384$")), true);
    assert.equal(needsRehash(encoded.replace(/^scrypt\$32768\$/, "scrypt$65536$")), true);
    assert.equal(needsRehash(encoded.replace(/\$8\$1\$/, "$16$1$")), true);
    assert.equal(needsRehash("not a hash"), true);
  });
});

describe("password rules", () => {
  it(`accepts ${MIN_PASSWORD_LENGTH} characters or more`, () => {
    assert.equal(passwordProblem("a".repeat(MIN_PASSWORD_LENGTH)), undefined);
    assert.equal(passwordProblem(PASSWORD), undefined);
  });

  it("refuses a short password with a clear sentence", () => {
    assert.equal(passwordProblem("short"), "The password must be at least 12 characters long (it has 5)");
    assert.match(passwordProblem("") ?? "", /at least 12 characters/);
  });

  it("counts characters, not UTF-16 units", () => {
    assert.match(passwordProblem("\u{1F511}".repeat(11)) ?? "", /it has 11/);
    assert.equal(passwordProblem("\u{1F511}".repeat(12)), undefined);
  });

  it("refuses an absurdly long password", () => {
    assert.match(passwordProblem("x".repeat(5000)) ?? "", /at most 1024 characters/);
  });

  it("generates strong passwords that pass the rules", () => {
    const a = generatePassword();
    assert.match(a, /^[A-Za-z0-9_-]{24}$/);
    assert.equal(passwordProblem(a), undefined);
    assert.notEqual(a, generatePassword());
  });
});
