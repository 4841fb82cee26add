import { PageTitle } from "../ui/page-title.tsx";

export function NotFoundPage() {
  return (
    <section>
      <PageTitle title="Page not found" />
      <p>
        There is no console page at this address. <a href="/console/status">Go to the status page</a>.
      </p>
    </section>
  );
}
