/**
 * Rewrites the configuration table of docs/administrators.md from the setting declarations (src/config/settings.ts).
 *
 *   npm run docs:settings
 *
 * test/unit/config/settings-docs.test.ts fails while the document's table differs from this output.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { withSettingsTable } from "../src/config/settings-table.ts";

const path = new URL("../docs/administrators.md", import.meta.url);
writeFileSync(path, withSettingsTable(readFileSync(path, "utf8")));
