// The project dashboard at /dashboard: a person signs in with an API key in a form, and sees the
// project's live and recent sessions (each linking to its session page), its totals per day and
// the key's own details. Everything here is registered in one encapsulated plugin (registerDashboard),
// apart from the API's routes: its cookies, form parsing and CSRF checks reach no other route.
//
// - Sign-in: the key is verified once and never kept. The answer sets a cookie that names the key's
//   id and project and an expiry, signed with a secret of the service's (HMAC-SHA256 through
//   @fastify/cookie; the secret lives in the store like the link-signing one, so every node and
//   every restart accept it). HttpOnly, SameSite=Strict, Path=/dashboard, Secure over HTTPS.
// - Every request re-checks the cookie: its signature, its expiry, and the key's state in the store
//   (KeyVerifier.isLive: revoking the key ends the dashboard at the next request), and that the key
//   still belongs to the cookie's project. Anything else is "signed out".
// - CSRF: every POST (sign-in included, against login CSRF) carries a token of
//   @fastify/csrf-protection, whose secret is in a signed HttpOnly cookie and whose tokens are bound
//   to who is signed in (its `userInfo`): a token of the sign-in page cannot sign the key out, and
//   none of one key works for another. SameSite=Strict already keeps a cross-site form from sending
//   the cookies; the token is the second lock.
// - Only the signed-in project's data: sessions are listed by project in the store, and a session
//   link (/dashboard/sessions/{id}) answers 404 unless the session is the project's, then redirects
//   to its session page with a freshly signed page link.

import fastifyCookie from "@fastify/cookie";
import fastifyCsrf from "@fastify/csrf-protection";
import fastifyFormbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { KeyVerifier } from "../auth.ts";
import { ApiError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import type { SessionLinks } from "../viewer/session-links.ts";
import { sessionPath } from "../viewer/session-links.ts";
import { DASHBOARD_CSP, type KeyView, renderDashboard, renderMessage, renderSignIn } from "./render.ts";

export const DASHBOARD_PATH = "/dashboard";
/** The name of the store's secret that signs the dashboard's cookies (Store.serviceSecret). */
export const DASHBOARD_SECRET_NAME = "dashboard-cookies";
/** The signed-in cookie. */
export const SIGNED_IN_COOKIE = "deckhand_dashboard";
/** The CSRF secret's cookie. */
export const CSRF_COOKIE = "deckhand_csrf";
/** How long a sign-in lasts. */
export const SIGN_IN_TTL_MS = 12 * 3600_000;
/** How many sessions the page lists, and over how many days it adds up. */
const SESSION_ROWS = 50;
const DAYS = 14;
/** Longest form body accepted (a key is under 100 characters). */
const FORM_BODY_LIMIT = 4096;

export interface DashboardDeps {
  store: Store;
  verifier: KeyVerifier;
  links: SessionLinks;
}

/** Who is signed in, once the cookie and the key's state were checked. */
interface SignedIn {
  keyId: string;
  projectId: string;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set on dashboard requests whose cookie is good; null otherwise. */
    dashboard: SignedIn | null;
  }
}

/** What the cookie holds (before its signature, which @fastify/cookie adds). */
interface CookieClaims {
  k: string;
  p: string;
  /** Expiry, epoch ms. */
  e: number;
}

function encodeClaims(claims: CookieClaims): string {
  return Buffer.from(JSON.stringify(claims)).toString("base64url");
}

function decodeClaims(value: string): CookieClaims | null {
  try {
    const claims = JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as Partial<CookieClaims>;
    if (typeof claims.k !== "string" || typeof claims.p !== "string" || typeof claims.e !== "number")
      return null;
    return { k: claims.k, p: claims.p, e: claims.e };
  } catch {
    return null;
  }
}

function secure(reply: FastifyReply): void {
  reply.header("cache-control", "no-store");
  reply.header("referrer-policy", "no-referrer");
  reply.header("x-content-type-options", "nosniff");
  reply.header("x-frame-options", "DENY");
  reply.header("content-security-policy", DASHBOARD_CSP);
  reply.type("text/html; charset=utf-8");
}

/** The key's details for the page: the store's listing (never the key or its hash), or an operator key's. */
async function keyView(store: Store, signedIn: SignedIn): Promise<KeyView | null> {
  if (signedIn.keyId.startsWith("operator_"))
    return { id: signedIn.keyId, projectId: signedIn.projectId, operator: true };
  const info = (await store.listKeys()).find((key) => key.id === signedIn.keyId);
  if (!info || info.projectId !== signedIn.projectId || info.revokedAt !== undefined) return null;
  return {
    id: info.id,
    projectId: info.projectId,
    createdAt: info.createdAt,
    operator: false,
    ...(info.name !== undefined ? { name: info.name } : {}),
  };
}

export async function registerDashboard(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const secret = await deps.store.serviceSecret(DASHBOARD_SECRET_NAME);
  await app.register(async (scope) => {
    await scope.register(fastifyCookie, { secret, hook: "onRequest" });
    await scope.register(fastifyFormbody, { bodyLimit: FORM_BODY_LIMIT });
    await scope.register(fastifyCsrf, {
      cookieKey: CSRF_COOKIE,
      cookieOpts: { path: DASHBOARD_PATH, sameSite: "strict", httpOnly: true, signed: true },
      // Bound to who is signed in: a token is good for one key's page (or the signed-out form) only.
      getUserInfo: (request: FastifyRequest) => request.dashboard?.keyId ?? "signed-out",
      csrfOpts: { hmacKey: secret },
    });
    scope.decorateRequest("dashboard", null);

    const cookieOptions = (request: FastifyRequest) => ({
      path: DASHBOARD_PATH,
      httpOnly: true,
      sameSite: "strict" as const,
      secure: request.protocol === "https",
      signed: true,
    });

    // Who is signed in, checked again on every request: signature, expiry, the key not revoked and
    // still of the cookie's project.
    scope.addHook("onRequest", async (request) => {
      const raw = request.cookies[SIGNED_IN_COOKIE];
      if (!raw) return;
      const unsigned = request.unsignCookie(raw);
      if (!unsigned.valid || unsigned.value === null) return;
      const claims = decodeClaims(unsigned.value);
      if (!claims || claims.e <= Date.now()) return;
      if (!(await deps.verifier.isLive(claims.k))) return;
      request.dashboard = { keyId: claims.k, projectId: claims.p };
    });

    // A form that failed its CSRF check gets a page that says what to do; other errors keep the
    // service's own handling (a throw here reaches the parent's handler).
    scope.setErrorHandler(async (error, request, reply) => {
      const code = (error as { code?: string }).code;
      if (code === "FST_CSRF_INVALID_TOKEN" || code === "FST_CSRF_MISSING_SECRET") {
        request.log.info({ code }, "dashboard form refused: no valid CSRF token");
        secure(reply);
        return reply
          .status(403)
          .send(
            renderMessage(
              "This form cannot be sent",
              "It did not come from this dashboard's page, or that page is too old. Open the page again and send the form from there.",
              { href: DASHBOARD_PATH, text: "Open the dashboard" },
            ),
          );
      }
      if (error instanceof ApiError && error.statusCode === 404) {
        secure(reply);
        return reply.status(404).send(
          renderMessage("Not found", "There is no such session in this project.", {
            href: DASHBOARD_PATH,
            text: "Back to the dashboard",
          }),
        );
      }
      throw error;
    });

    const signInPage = (reply: FastifyReply, error?: string) => {
      const csrfToken = reply.generateCsrf({ userInfo: "signed-out" });
      secure(reply);
      return renderSignIn({ csrfToken, ...(error ? { error } : {}) });
    };

    scope.get(`${DASHBOARD_PATH}/sign-in`, { schema: { hide: true } }, async (request, reply) => {
      if (request.dashboard) return reply.redirect(DASHBOARD_PATH, 303);
      return signInPage(reply);
    });

    scope.post(
      `${DASHBOARD_PATH}/sign-in`,
      { schema: { hide: true }, preHandler: scope.csrfProtection },
      async (request, reply) => {
        const key = (request.body as { key?: unknown } | undefined)?.key;
        const identity =
          typeof key === "string" && key.length > 0 && key.length <= 200
            ? await deps.verifier.verify(key.trim())
            : null;
        if (!identity) {
          reply.status(401);
          return signInPage(reply, "That key is not valid, or it was revoked. Check it and try again.");
        }
        const claims: CookieClaims = {
          k: identity.keyId,
          p: identity.projectId,
          e: Date.now() + SIGN_IN_TTL_MS,
        };
        reply.setCookie(SIGNED_IN_COOKIE, encodeClaims(claims), {
          ...cookieOptions(request),
          maxAge: Math.floor(SIGN_IN_TTL_MS / 1000),
        });
        // A new CSRF secret for the signed-in page: nothing of the signed-out form carries over.
        reply.clearCookie(CSRF_COOKIE, cookieOptions(request));
        request.log.info({ keyId: identity.keyId }, "dashboard sign-in");
        return reply.redirect(DASHBOARD_PATH, 303);
      },
    );

    scope.post(
      `${DASHBOARD_PATH}/sign-out`,
      { schema: { hide: true }, preHandler: scope.csrfProtection },
      async (request, reply) => {
        reply.clearCookie(SIGNED_IN_COOKIE, cookieOptions(request));
        reply.clearCookie(CSRF_COOKIE, cookieOptions(request));
        if (request.dashboard) request.log.info({ keyId: request.dashboard.keyId }, "dashboard sign-out");
        return reply.redirect(`${DASHBOARD_PATH}/sign-in`, 303);
      },
    );

    scope.get(DASHBOARD_PATH, { schema: { hide: true } }, async (request, reply) => {
      const signedIn = request.dashboard;
      if (!signedIn) return reply.redirect(`${DASHBOARD_PATH}/sign-in`, 303);
      const key = await keyView(deps.store, signedIn);
      if (!key) return reply.redirect(`${DASHBOARD_PATH}/sign-in`, 303);
      const now = Date.now();
      const [sessions, days] = await Promise.all([
        deps.store.listProjectSessions(signedIn.projectId, { limit: SESSION_ROWS }),
        deps.store.projectDailyTotals(signedIn.projectId, now - (DAYS - 1) * 86_400_000 - (now % 86_400_000)),
      ]);
      const csrfToken = reply.generateCsrf({ userInfo: signedIn.keyId });
      secure(reply);
      return renderDashboard({
        key,
        sessions,
        days,
        dayCount: DAYS,
        csrfToken,
        now,
        sessionLink: (id) => `${DASHBOARD_PATH}/sessions/${encodeURIComponent(id)}`,
      });
    });

    // A session's row links here: its page, through a fresh signed link, if it is this project's.
    scope.get<{ Params: { id: string } }>(
      `${DASHBOARD_PATH}/sessions/:id`,
      { schema: { hide: true } },
      async (request, reply) => {
        const signedIn = request.dashboard;
        if (!signedIn) return reply.redirect(`${DASHBOARD_PATH}/sign-in`, 303);
        const session = await deps.store.getSession(request.params.id);
        // Another project's session and no session at all answer alike.
        if (!session || session.projectId !== signedIn.projectId)
          throw new ApiError(404, "NOT_FOUND", "No such session in this project.");
        const token = deps.links.token(session.id, signedIn.keyId, "page");
        reply.header("cache-control", "no-store");
        reply.header("referrer-policy", "no-referrer");
        return reply.redirect(`${sessionPath(session.id, "view")}?token=${encodeURIComponent(token)}`, 303);
      },
    );
  });
}
