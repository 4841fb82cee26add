/** Who is calling the platform API and what they may read, from a platform token or an API key. */
export interface Principal {
  subject: string;
  roles: string[];
  /** Application names a non-admin may read. */
  applications: string[];
  via: "token" | "api-key";
}

export function isAdmin(principal: Principal): boolean {
  return principal.roles.includes("admin");
}

export function canReadApplication(principal: Principal, name: string): boolean {
  if (isAdmin(principal)) return true;
  return principal.roles.includes("viewer") && principal.applications.includes(name);
}

/** Applications a caller may list: null means all of them. */
export function readableApplications(principal: Principal): string[] | null {
  if (isAdmin(principal)) return null;
  return principal.roles.includes("viewer") ? principal.applications : [];
}

/** Reads the DESIGN.md claims contract (`roles`, `applications`) from a verified token payload. */
export function principalFromClaims(payload: Record<string, unknown>): Principal {
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  return {
    subject: typeof payload.sub === "string" ? payload.sub : "",
    roles: strings(payload.roles),
    applications: strings(payload.applications),
    via: "token",
  };
}
