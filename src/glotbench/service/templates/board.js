// Sort a leaderboard table by the clicked column: numbers as numbers (a missing value sorts last), text as text.
document.querySelectorAll("table.sortable th").forEach((th, col) => th.addEventListener("click", () => {
  const table = th.closest("table"), body = table.tBodies[0];
  const desc = th.getAttribute("aria-sort") !== "descending";
  table.querySelectorAll("th").forEach(h => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", desc ? "descending" : "ascending");
  const numeric = [...body.rows].some(r => r.cells[col].dataset.v !== undefined);
  const key = td => {
    if (!numeric) return td.textContent.trim();
    const n = parseFloat(td.dataset.v);
    return isNaN(n) ? (desc ? -Infinity : Infinity) : n;
  };
  [...body.rows].sort((a, b) => { const x = key(a.cells[col]), y = key(b.cells[col]);
    return (x < y ? -1 : x > y ? 1 : 0) * (desc ? -1 : 1); }).forEach(r => body.appendChild(r));
}));
