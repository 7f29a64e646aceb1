/**
 * What onboarding needs and lacks, from GET /system/health `onboarding`: a
 * public URL for collectors (externalUrl) and svc-agent packages in
 * downloads.dir. The System page lists every problem with its fix; the
 * Onboarding page uses the same answer to disable what cannot work.
 */
import type { OnboardingReadiness } from "../../../shared/system.ts";
import { api } from "../client.ts";
import { useLoad } from "../load.ts";
import "./SetupWarnings.css";

/** The server's answer, or null until it arrives (or when the caller may not read health: then nothing is disabled). */
export function useOnboardingReadiness(enabled: boolean): OnboardingReadiness | null {
  const { data: readiness } = useLoad(enabled ? () => api.get("/system/health").then((health) => health.onboarding) : null, "", {
    clearOnError: true,
  });
  return readiness;
}

/** One problem and how to fix it (the server's sentence says both). */
export function SetupWarning({ id, title, problem }: { id: string; title: string; problem: string }) {
  return (
    <p id={id} className="setup-warning" role="note">
      <strong>{title}.</strong> {problem}
    </p>
  );
}

/** Every onboarding problem, and a note when only the quick-start's loopback URL is in use. */
export function SetupWarnings({ readiness, externalUrl }: { readiness: OnboardingReadiness; externalUrl: string | null }) {
  return (
    <>
      {readiness.externalUrlSource === "listen" && (
        <SetupWarning
          id="warning-external-url"
          title="externalUrl is not set"
          problem={`The quick-start gives collectors the URL it serves, ${externalUrl}, which works on this host only. To onboard collectors on other hosts, set externalUrl in config.yaml (or EXTERNAL_URL) to this server's https URL and restart.`}
        />
      )}
      {!readiness.collectorSnippet.ready && (
        <SetupWarning id="warning-external-url" title="Collectors cannot be onboarded" problem={readiness.collectorSnippet.problem ?? ""} />
      )}
      {!readiness.agentPackages.ready && (
        <SetupWarning id="warning-downloads" title="svc-agent cannot be installed" problem={readiness.agentPackages.problem ?? ""} />
      )}
    </>
  );
}
