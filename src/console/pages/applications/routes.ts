/**
 * The Applications pages' entries of the console's route table (src/console/routes.ts). Loaded on
 * first use: the chart code (d3-scale) and these pages stay out of the first page's JavaScript.
 */
import type { ComponentType } from "preact";
import { lazy } from "preact-iso";
import { APPS } from "./paths.ts";

const page = <K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K) =>
  lazy(() => load().then((m) => m[name]));

export const applicationRoutes = [
  {
    path: APPS,
    component: page(() => import("./list.tsx"), "ApplicationsList"),
    nav: "Applications",
  },
  { path: `${APPS}/:name`, component: page(() => import("./overview.tsx"), "ApplicationOverview") },
  { path: `${APPS}/:name/cves`, component: page(() => import("./cves.tsx"), "ApplicationCves") },
  { path: `${APPS}/:name/cves/:id`, component: page(() => import("./occurrences.tsx"), "CveOccurrences") },
  { path: `${APPS}/:name/packages`, component: page(() => import("./packages.tsx"), "ApplicationPackages") },
  {
    path: `${APPS}/:name/packages/:package`,
    component: page(() => import("./packages.tsx"), "PackageDetail"),
  },
  { path: `${APPS}/:name/compare`, component: page(() => import("./compare.tsx"), "CompareAnalyses") },
];
