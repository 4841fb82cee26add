/**
 * Rewrites README.md's configuration table from the setting declarations (src/config/settings.ts).
 *
 *   npm run docs:settings
 *
 * test/unit/config/settings-readme.test.ts fails while the README's table differs from this output.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { withSettingsTable } from "../src/config/settings-table.ts";

const path = new URL("../README.md", import.meta.url);
writeFileSync(path, withSettingsTable(readFileSync(path, "utf8")));
