import { readFileSync } from "node:fs";
import { describeWithoutValue, maskUrlUserinfo } from "./redact.ts";
import { isSecretSetting, type SettingKey, type Settings, settingList, settingsSchema } from "./settings.ts";

/** A configuration problem, in one readable message; URL userinfo in it is always masked. */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(message: string) {
    super(maskUrlUserinfo(message));
  }
}

type Source = "default" | "config file" | "environment" | "command line";

interface LoadConfigInput {
  env?: NodeJS.ProcessEnv;
  /** Path of an optional JSON config file; IMAGING_CONFIG in env otherwise. */
  configFile?: string | undefined;
  /** Command-line flags, highest precedence. */
  overrides?: Partial<Record<SettingKey, string | number | undefined>>;
}

/** Merges defaults < config file < environment < command line, then validates with named reasons. */
export function loadSettings(input: LoadConfigInput = {}): Settings {
  const env = input.env ?? process.env;
  const raw: Record<string, unknown> = {};
  const sources = new Map<string, Source>();
  const put = (key: string, value: unknown, source: Source) => {
    if (value === undefined || value === "") return;
    raw[key] = value;
    sources.set(key, source);
  };

  const file = input.configFile ?? env.IMAGING_CONFIG;
  if (file) {
    for (const [key, value] of Object.entries(readConfigFile(file))) put(key, value, "config file");
  }
  for (const setting of settingList) put(setting.key, env[setting.env], "environment");
  for (const [key, value] of Object.entries(input.overrides ?? {})) put(key, value, "command line");

  const parsed = settingsSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? "");
    const setting = settingList.find((s) => s.key === key);
    const source = sources.get(key) ?? "default";
    const where = source === "environment" ? (setting?.env ?? key) : key;
    const got = !(key in raw)
      ? ""
      : isSecretSetting(key)
        ? ` (got ${describeWithoutValue(raw[key])}; a secret's value is not shown)`
        : ` (got ${JSON.stringify(raw[key])})`;
    return `${where} from ${source}: ${issue.message}${got}`;
  });
  throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(`Cannot read config file ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the text around the error, which may be a secret: only the place is given.
    throw new ConfigError(`Config file ${path} is not valid JSON${jsonErrorPlace(text, error as Error)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`Config file ${path} must hold a JSON object of settings`);
  }
  const known = new Set<string>(settingList.map((s) => s.key));
  const unknown = Object.keys(value).filter((k) => !known.has(k));
  if (unknown.length > 0) {
    throw new ConfigError(
      `Config file ${path}: unknown key(s) ${unknown.join(", ")}; known keys: ${[...known].join(", ")}`,
    );
  }
  return value as Record<string, unknown>;
}

/** " at line L, column C" of a JSON.parse error, when its message gives the position. */
function jsonErrorPlace(text: string, error: Error): string {
  const position = /position (\d+)/.exec(error.message)?.[1];
  if (position === undefined) return "";
  const before = text.slice(0, Number(position));
  const line = before.split("\n").length;
  const column = Number(position) - before.lastIndexOf("\n");
  return ` at line ${line}, column ${column}`;
}
