/** The desk's mark and name, in the header and on the sign-in page. */
export function Brand() {
  return (
    <div className="brand">
      <svg aria-hidden="true" viewBox="0 0 24 24" className="logo">
        <path d="M4 5h16v10H9l-5 4z" />
      </svg>
      <span>Support desk</span>
    </div>
  );
}
