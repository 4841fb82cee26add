/**
 * The part of oidc-provider 9.x (plain JavaScript, no bundled types) this project uses, typed from the
 * library's source (lib/provider.js, lib/models/*, lib/helpers/errors.js). Only what we call is here.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export interface KoaCookies {
    get(name: string, options?: { signed?: boolean }): string | undefined;
    set(name: string, value: string | null, options?: Record<string, unknown>): void;
  }

  /** The Koa context oidc-provider hands to configuration functions and middleware. */
  export interface KoaContextWithOIDC {
    req: IncomingMessage;
    res: ServerResponse;
    method: string;
    path: string;
    url: string;
    href: string;
    origin: string;
    ip: string;
    secure: boolean;
    query: Record<string, string | string[] | undefined>;
    status: number;
    body: unknown;
    type: string;
    respond?: boolean;
    cookies: KoaCookies;
    get(header: string): string;
    set(header: string, value: string): void;
    redirect(url: string): void;
    oidc: OIDCContext;
  }

  export interface OIDCContext {
    route?: string;
    params?: Record<string, unknown>;
    client?: Client;
    issuer: string;
    entities: Record<string, unknown>;
    session?: { accountId?: string };
    urlFor(name: string, options?: Record<string, unknown>): string;
  }

  export type KoaMiddleware = (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void> | void;

  export interface ClientMetadata {
    client_id: string;
    [key: string]: unknown;
  }

  export interface Client {
    clientId: string;
    clientName?: string;
    clientUri?: string;
    redirectUris: string[];
    applicationType: string;
    clientAuthMethod: string;
    grantTypes: string[];
    grantTypeAllowed(type: string): boolean;
    redirectUriAllowed(uri: string): boolean;
    postLogoutRedirectUriAllowed(uri: string): boolean;
    metadata(): ClientMetadata;
  }

  export interface ClientStatic {
    new (metadata: ClientMetadata, ctx?: unknown): Client;
    find(id: string): Promise<Client | undefined>;
  }

  export interface ResourceServerInfo {
    scope: string;
    audience?: string;
    accessTokenTTL?: number;
    accessTokenFormat?: "opaque" | "jwt";
    jwt?: { sign?: { alg?: string; kid?: string } };
  }

  export interface ResourceServer extends ResourceServerInfo {
    identifier(): string;
  }

  export interface BaseToken {
    jti: string;
    kind: string;
    iat?: number;
    exp?: number;
    accountId?: string;
    clientId?: string;
    scope?: string;
    gty?: string;
    grantId?: string;
    expiresIn?: number;
    extra?: Record<string, unknown>;
    readonly expiration: number;
    readonly remainingTTL: number;
    resourceServer?: ResourceServer;
    client?: Client;
    save(): Promise<string>;
  }

  export interface AccessTokenStatic {
    new (input: {
      accountId?: string;
      client: Client;
      gty?: string;
      scope?: string;
      expiresIn?: number;
      grantId?: string;
    }): BaseToken;
  }

  export interface Grant {
    jti: string;
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addOIDCClaims(claims: string[]): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface GrantStatic {
    new (input: { accountId: string; clientId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }

  export interface InteractionPrompt {
    name: string;
    reasons: string[];
    details: Record<string, unknown> & {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
      login_hint?: string;
    };
  }

  export interface Interaction {
    uid: string;
    jti: string;
    exp: number;
    prompt: InteractionPrompt;
    params: Record<string, unknown> & { client_id?: string; redirect_uri?: string; scope?: string };
    session?: { accountId: string; uid: string; cookie?: string };
    grantId?: string;
    returnTo: string;
    lastSubmission?: Record<string, unknown>;
  }

  export interface InteractionResults {
    login?: { accountId: string; remember?: boolean; ts?: number; amr?: string[]; acr?: string };
    consent?: { grantId?: string };
    error?: string;
    error_description?: string;
    [key: string]: unknown;
  }

  export interface ProviderConfiguration {
    [key: string]: unknown;
  }

  export class Provider {
    constructor(issuer: string, configuration?: ProviderConfiguration);
    readonly issuer: string;
    proxy: boolean;
    readonly Client: ClientStatic;
    readonly Grant: GrantStatic;
    readonly AccessToken: AccessTokenStatic;
    readonly ResourceServer: new (
      identifier: string,
      data: ResourceServerInfo,
    ) => ResourceServer;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    use(middleware: KoaMiddleware): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    registerGrantType(
      name: string,
      handler: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>,
      parameters?: string[] | Set<string>,
      allowedDuplicateParameters?: string[] | Set<string>,
    ): void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    urlFor(name: string, options?: Record<string, unknown>): string;
  }

  export interface OIDCProviderError extends Error {
    error: string;
    error_description?: string;
    status: number;
    statusCode: number;
    expose: boolean;
  }

  type ErrorClass = new (description?: string, detail?: string) => OIDCProviderError;

  export const errors: {
    OIDCProviderError: new (status: number, message: string) => OIDCProviderError;
    AccessDenied: ErrorClass;
    InvalidClient: ErrorClass;
    InvalidGrant: ErrorClass;
    InvalidRequest: ErrorClass;
    InvalidScope: ErrorClass;
    InvalidTarget: ErrorClass;
    SessionNotFound: ErrorClass;
    UnauthorizedClient: ErrorClass;
    UnsupportedTokenType: ErrorClass;
  };

  export default Provider;
}
