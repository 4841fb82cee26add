import type { ComponentType } from "preact";
import { applicationRoutes } from "./pages/applications/routes.ts";
import { CimdPoliciesPage } from "./pages/cimd-policies.tsx";
import { ConnectPage } from "./pages/connect.tsx";
import { StatusPage } from "./pages/status.tsx";
import { UsersPage } from "./pages/users.tsx";

/**
 * The console's pages: path (preact-iso syntax, `:param` segments), the navigation label when the page
 * is in the menu, and whether only admins see it in the menu (the REST API enforces it either way).
 * Each engineer adds their pages' entries here.
 */
interface ConsoleRoute {
  path: string;
  // biome-ignore lint/suspicious/noExplicitAny: pages take their route parameters as props
  component: ComponentType<any>;
  nav?: string;
  adminOnly?: boolean;
}

export const routes: ConsoleRoute[] = [
  { path: "/", component: StatusPage },
  { path: "/console", component: StatusPage },
  { path: "/console/status", component: StatusPage, nav: "Status" },
  { path: "/console/connect", component: ConnectPage, nav: "Connect an AI client" },
  ...applicationRoutes,
  {
    path: "/console/cimd-policies",
    component: CimdPoliciesPage,
    nav: "CIMD client policies",
    adminOnly: true,
  },
  { path: "/console/users", component: UsersPage, nav: "Users and API keys", adminOnly: true },
];
