/** The Applications pages' entries of the console's route table (src/console/routes.ts). */
import { ApplicationsList } from "./list.tsx";
import { CompareAnalyses } from "./compare.tsx";
import { ApplicationCves } from "./cves.tsx";
import { CveOccurrences } from "./occurrences.tsx";
import { ApplicationOverview } from "./overview.tsx";
import { ApplicationPackages, PackageDetail } from "./packages.tsx";
import { APPS } from "./widgets.tsx";

export const applicationRoutes = [
  { path: APPS, component: ApplicationsList },
  { path: `${APPS}/:name`, component: ApplicationOverview },
  { path: `${APPS}/:name/cves`, component: ApplicationCves },
  { path: `${APPS}/:name/cves/:id`, component: CveOccurrences },
  { path: `${APPS}/:name/packages`, component: ApplicationPackages },
  { path: `${APPS}/:name/packages/:package`, component: PackageDetail },
  { path: `${APPS}/:name/compare`, component: CompareAnalyses },
];
