/** What every view gets from the shell, and what it gives back. */
export interface Identity {
  userId: string;
  tenantId: string;
  role: string;
}

/** Which roles a policy of src/policies.ts lets in (the server asks each policy: runtime/http/dashboard-identities.ts). */
export interface PolicyRoles {
  roles: string[];
  anyRole: boolean;
}

export interface ViewContext {
  /** The identity chosen in the header (dev auth), for running entries and reading as a tenant. */
  identity(): Identity;
  /** Changes the identity at the top (a "run as agent" button); remembered like one picked there. */
  setIdentity(change: Partial<Identity>): void;
  /** The policies of src/policies.ts and the roles each lets in (empty until loaded). */
  policies(): Record<string, PolicyRoles>;
  /** Dev mode: the controls for time (run now, trigger, skip a sleep, signal, rerun) are offered (false until known). */
  dev(): boolean;
  /** The rest of the hash after the view's name: `#/data/notes` → `notes`. */
  param: string;
  navigate(hash: string): void;
}

export interface ViewInstance {
  /** Called every couple of seconds while the tab is visible and the dashboard is live (not paused). */
  refresh?(): Promise<void>;
  /** The hash's param changed within this view (an entry picked): update in place instead of rendering anew. */
  onParam?(param: string): void;
}

export interface View {
  id: string;
  title: string;
  render(container: HTMLElement, context: ViewContext): ViewInstance;
}
