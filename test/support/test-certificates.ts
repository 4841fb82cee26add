import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface TestCertificates {
  /** PEM of the throwaway CA. */
  ca: string;
  caFile: string;
  /** Server certificate and key for 127.0.0.1 and localhost, signed by the CA. */
  certFile: string;
  keyFile: string;
}

/**
 * P-256 keys: what the certificates stand for (a CA that Node.js, Keycloak and Chromium trust, a server
 * certificate for 127.0.0.1) needs no RSA, and two RSA-2048 key generations took ~0.4 s of CPU (at
 * random, up to a second) in each of the ~40 calls of a run; a P-256 key takes milliseconds.
 */
const NEW_KEY = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1";

/** A throwaway CA and a server certificate for 127.0.0.1 / localhost, made with the openssl CLI in `dir`. */
export function makeTestCertificates(dir: string): TestCertificates {
  const openssl = (command: string) =>
    execFileSync("openssl", command.split(" "), { cwd: dir, stdio: "pipe" });
  openssl(
    `req -x509 ${NEW_KEY} -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=imaging-test-CA ` +
      "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
  );
  openssl(`req ${NEW_KEY} -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1`);
  writeFileSync(
    join(dir, "server.ext"),
    "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n" +
      "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  openssl(
    "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext",
  );
  return {
    ca: readFileSync(join(dir, "ca.pem"), "utf8"),
    caFile: join(dir, "ca.pem"),
    certFile: join(dir, "server.pem"),
    keyFile: join(dir, "server.key"),
  };
}
