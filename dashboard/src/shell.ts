/** What every view gets from the shell, and what it gives back. */
export interface Identity {
  userId: string;
  tenantId: string;
  role: string;
}

export interface ViewContext {
  /** The identity chosen in the header (dev auth), for running entries and reading as a tenant. */
  identity(): Identity;
  /** The rest of the hash after the view's name: `#/data/notes` → `notes`. */
  param: string;
  navigate(hash: string): void;
}

export interface ViewInstance {
  /** Called every couple of seconds while the tab is visible (live updates by polling fw's routes). */
  refresh?(): Promise<void>;
  /** The hash's param changed within this view (an entry picked): update in place instead of rendering anew. */
  onParam?(param: string): void;
}

export interface View {
  id: string;
  title: string;
  render(container: HTMLElement, context: ViewContext): ViewInstance;
}
