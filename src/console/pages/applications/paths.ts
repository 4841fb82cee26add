/** Where the Applications pages live; every link is built from it. */
export const APPS = "/console/applications";

export const appPath = (name: string, ...rest: string[]): string =>
  [APPS, encodeURIComponent(name), ...rest.map(encodeURIComponent)].join("/");
