import { useEffect, useState } from "react";
import { api } from "../api.js";
import type { EndpointCheckRequest, EndpointCheckResult, UpstreamListing } from "../api-types.js";

/**
 * Where an `openai:` chat model's requests go: an upstream of agent-lab.yaml or a base URL, and the
 * key's variable by name. The server tests the endpoint (reachable? key present? model known?) and
 * lists its models; the browser never calls the endpoint itself and never sees a key.
 */

export interface EndpointState {
  upstreams: UpstreamListing[];
  upstream: string;
  baseUrl: string;
  keyEnv: string;
  check: EndpointCheckResult | null;
  checking: boolean;
  checkError: unknown;
  chooseUpstream(name: string): UpstreamListing | null;
  setBaseUrl(value: string): void;
  setKeyEnv(value: string): void;
  /** Asks the server; resolves to the result (null when the request itself failed). */
  runCheck(model: string): Promise<EndpointCheckResult | null>;
}

export function useEndpoint(): EndpointState {
  const [upstreams, setUpstreams] = useState<UpstreamListing[]>([]);
  const [upstream, setUpstream] = useState("");
  const [baseUrl, setBaseUrlValue] = useState("");
  const [keyEnv, setKeyEnvValue] = useState("");
  const [check, setCheck] = useState<EndpointCheckResult | null>(null);
  const [checking, setChecking] = useState(false);
  const [checkError, setCheckError] = useState<unknown>(null);

  useEffect(() => {
    const controller = new AbortController();
    // An older server without the route offers no upstreams; the base URL still works.
    api.upstreams(controller.signal).then(
      (response) => setUpstreams(response.upstreams),
      () => {},
    );
    return () => controller.abort();
  }, []);

  // A result describes the endpoint it was made for: any change makes it stale.
  const edited = () => {
    setCheck(null);
    setCheckError(null);
  };
  return {
    upstreams,
    upstream,
    baseUrl,
    keyEnv,
    check,
    checking,
    checkError,
    chooseUpstream(name) {
      edited();
      setUpstream(name);
      const chosen = upstreams.find((item) => item.name === name) ?? null;
      setBaseUrlValue(chosen?.base_url ?? "");
      setKeyEnvValue(chosen?.api_key_env ?? "");
      return chosen;
    },
    setBaseUrl(value) {
      edited();
      setUpstream("");
      setBaseUrlValue(value);
    },
    setKeyEnv(value) {
      edited();
      setKeyEnvValue(value);
    },
    async runCheck(model) {
      setChecking(true);
      setCheckError(null);
      const name = model.replace(/^openai:/, "").trim();
      const body: EndpointCheckRequest = upstream
        ? { upstream, ...(name ? { model: name } : {}) }
        : {
            ...(baseUrl.trim() ? { base_url: baseUrl.trim() } : {}),
            ...(keyEnv.trim() ? { api_key_env: keyEnv.trim() } : {}),
            ...(name ? { model: name } : {}),
          };
      try {
        const result = await api.checkEndpoint(body);
        setCheck(result);
        return result;
      } catch (error) {
        setCheckError(error);
        return null;
      } finally {
        setChecking(false);
      }
    },
  };
}

export function EndpointFields({
  id,
  endpoint,
  onModel,
  model,
}: {
  id: string;
  endpoint: EndpointState;
  /** Picks the chat model (an upstream's, or one the endpoint lists). */
  onModel(model: string): void;
  model: string;
}) {
  const { upstreams, check } = endpoint;
  return (
    <fieldset className="field field-wide endpoint-fieldset" data-testid="endpoint-fields">
      <legend>Endpoint (openai: models)</legend>
      {upstreams.length > 0 ? (
        <div className="field">
          <label htmlFor={`${id}-upstream`}>Upstream (agent-lab.yaml)</label>
          <select
            id={`${id}-upstream`}
            data-testid="endpoint-upstream"
            value={endpoint.upstream}
            onChange={(event) => {
              const chosen = endpoint.chooseUpstream(event.target.value);
              if (chosen) onModel(`openai:${chosen.model}`);
            }}
          >
            <option value="">none: a base URL</option>
            {upstreams.map((item) => (
              <option key={item.name} value={item.name}>
                {item.name} ({item.model})
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <div className="field">
        <label htmlFor={`${id}-base-url`}>Base URL</label>
        <input
          id={`${id}-base-url`}
          data-testid="endpoint-base-url"
          value={endpoint.baseUrl}
          placeholder="http://127.0.0.1:11434/v1 (empty: the server's OPENAI_BASE_URL, else OpenAI)"
          spellCheck={false}
          onChange={(event) => endpoint.setBaseUrl(event.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor={`${id}-key-env`}>Key variable (on the server)</label>
        <input
          id={`${id}-key-env`}
          data-testid="endpoint-key-env"
          value={endpoint.keyEnv}
          placeholder="OPENAI_API_KEY"
          spellCheck={false}
          disabled={endpoint.upstream !== ""}
          onChange={(event) => endpoint.setKeyEnv(event.target.value)}
        />
      </div>
      <div className="form-actions">
        <button
          type="button"
          className="button"
          data-testid="endpoint-test"
          disabled={endpoint.checking}
          onClick={() => void endpoint.runCheck(model)}
        >
          {endpoint.checking ? "Testing…" : "Test endpoint"}
        </button>
      </div>
      {check ? <CheckResult check={check} model={model} onModel={onModel} /> : null}
      {endpoint.checkError ? (
        <p className="error-text" role="alert">
          The check itself failed: {String((endpoint.checkError as Error).message ?? "")}
        </p>
      ) : null}
    </fieldset>
  );
}

function CheckResult({
  check,
  model,
  onModel,
}: {
  check: EndpointCheckResult;
  model: string;
  onModel(model: string): void;
}) {
  const key = check.key.env
    ? `${check.key.env} ${check.key.present ? "is set" : `is not set${check.key.needed ? " (needed)" : " (not needed: no key is sent)"}`}`
    : "no key is sent";
  return (
    <div
      className={`endpoint-check ${check.ok ? "endpoint-ok" : "endpoint-problem"}`}
      data-testid="endpoint-check"
      role="status"
    >
      <p>
        <strong>{check.ok ? "✓ Endpoint ready" : "✗ Endpoint has problems"}</strong>{" "}
        <code>{check.base_url}</code>
      </p>
      <ul className="small">
        <li>{check.reachable ? "reachable" : "not reachable"}</li>
        <li>{key}</li>
        {check.model !== null && check.model_known !== null ? (
          <li>
            model <code>{check.model}</code> {check.model_known ? "is listed" : "is not listed"}
          </li>
        ) : null}
      </ul>
      {check.problems.length > 0 ? (
        <ul className="endpoint-problems" data-testid="endpoint-problems">
          {check.problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      ) : null}
      {check.models && check.models.length > 0 ? (
        <div className="field">
          <label htmlFor="endpoint-models">Models the endpoint lists</label>
          <select
            id="endpoint-models"
            data-testid="endpoint-models"
            value={model.replace(/^openai:/, "")}
            onChange={(event) => onModel(`openai:${event.target.value}`)}
          >
            {check.models.includes(model.replace(/^openai:/, "")) ? null : (
              <option value={model.replace(/^openai:/, "")}>choose one…</option>
            )}
            {check.models.map((listed) => (
              <option key={listed} value={listed}>
                {listed}
              </option>
            ))}
          </select>
        </div>
      ) : null}
    </div>
  );
}
