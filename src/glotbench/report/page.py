"""The page shell shared by the run report and the board: inline CSS and JavaScript (no CDN, no
external request of any kind), and the sample browser. Sample data travels as JSON in a
`<script type="application/json">` block; the browser builds each card with textContent, so a model's
output is always shown as text, never interpreted as HTML."""

from __future__ import annotations

import json
from html import escape
from typing import Any, Sequence

CSS = """
:root{--fg:#1a202c;--mute:#4a5568;--line:#e2e8f0;--acc:#2b6cb0;--bad:#c53030;--ok:#2f855a;--warn:#b7791f}
*{box-sizing:border-box}body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif;
color:var(--fg);margin:0;background:#f7fafc}main{max-width:1040px;margin:0 auto;padding:12px 16px 40px}
header{background:#fff;border-bottom:1px solid var(--line);padding:12px 16px}header h1{margin:0;font-size:20px}
nav{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:14px;margin-top:6px}nav a{color:var(--acc)}
section{background:#fff;border:1px solid var(--line);border-radius:6px;padding:12px 16px;margin:14px 0;overflow-x:auto}
h2{font-size:17px;margin:0 0 8px}h3{font-size:15px;margin:12px 0 4px}
.headline{font-size:28px;font-weight:600}.ci{color:var(--mute)}.sig{font:12px/1.4 ui-monospace,monospace;
word-break:break-all;background:#edf2f7;padding:6px 8px;border-radius:4px}
table{border-collapse:collapse;font-size:14px;margin:6px 0}td,th{padding:3px 8px;border-bottom:1px solid var(--line);
text-align:right;white-space:nowrap}td:first-child,th:first-child{text-align:left}
th{font-weight:600;color:var(--mute)}.note{color:var(--mute);font-size:13px}
svg.plot{max-width:100%;height:auto;font-size:12px}svg.ci,svg.bars{max-width:780px}svg .grid{stroke:#edf2f7}svg .tick{fill:var(--mute);text-anchor:middle}
svg .lbl{text-anchor:end;fill:var(--fg)}svg .val{fill:var(--mute)}svg .err{stroke:#4a5568;stroke-width:1.5}
svg .dot{fill:var(--acc)}svg .bar{fill:#90cdf4}svg .na{fill:var(--mute)}svg .frame{fill:none;stroke:var(--line)}
svg .front{fill:none;stroke:var(--bad);stroke-width:2;stroke-dasharray:5 3}svg .front-dot{fill:var(--bad)}
svg .ptlbl{font-size:11px}svg .grp{font-weight:600;fill:var(--mute)}
table.wrap td{white-space:normal}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:8px}.pair pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;
background:#f7fafc;padding:4px 6px;border-radius:3px;font:13px/1.4 ui-monospace,monospace}.pair b{font-size:12px;color:var(--mute)}
.filters{display:flex;flex-wrap:wrap;gap:6px 10px;align-items:center;margin-bottom:8px}
.filters select,.filters input{font:inherit;padding:3px 6px;max-width:100%}.filters input{min-width:14em;flex:1}
.pager{display:flex;gap:8px;align-items:center;margin:8px 0}.pager button{font:inherit}
details.sample{border:1px solid var(--line);border-radius:4px;margin:4px 0;padding:4px 8px}
details.sample summary{cursor:pointer;display:flex;flex-wrap:wrap;gap:4px 10px;align-items:center}
.badge{font-size:12px;padding:0 6px;border-radius:8px;background:#edf2f7}.b-correct{background:#c6f6d5}
.b-incorrect{background:#fed7d7}.b-partial{background:#fefcbf}.b-fail{background:#fbd38d}
.blk{margin:6px 0}.blk b{display:block;font-size:12px;color:var(--mute)}
.blk pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;background:#f7fafc;padding:4px 6px;border-radius:3px;
font:13px/1.4 ui-monospace,monospace}
.w{padding:0 1px;border-radius:2px}.w-tone{background:#fed7d7;text-decoration:underline wavy var(--bad)}
.w-mark{background:#feebc8}.w-missing{background:#e2e8f0;text-decoration:line-through}.w-extra{background:#bee3f8}
.legend span{margin-right:10px}.sig-best{font-weight:700}.tie{background:#ebf8ff}
.warn{color:var(--bad);font-weight:600}.cellnote{display:block;font-size:12px;font-weight:400;color:var(--bad);white-space:normal}
@media (max-width:600px){main{padding:8px}section{padding:8px}td,th{padding:2px 4px}.headline{font-size:22px}}
"""

def notes_html(results: Any) -> str:
    """What must be read with a run's numbers (invalid, a subset, sample data: rundir/validity.py),
    one line each, for a page's header."""
    from glotbench.rundir.validity import notes

    return "".join(f'<p class="warn" data-note="{i}">{escape(t)}</p>' for i, t in enumerate(notes(results)))


BROWSER_JS = r"""
(function(){
const el=document.getElementById('samples-data'); if(!el) return;
const rows=JSON.parse(el.textContent), PAGE=50; let page=0, shown=rows;
const tplEl=document.getElementById('prompt-template'), tpl=tplEl?JSON.parse(tplEl.textContent):null;
function promptText(p){
  let parts, roles=null;
  if(p.fill && tpl){ parts=tpl.parts.map((x,i)=>x.head+(p.fill[i]||'')+x.tail); roles=tpl.roles; }
  else if(p.messages){ parts=p.messages.map(m=>String(m.content)); roles=p.messages.map(m=>m.role); }
  else parts=[p.text===null||p.text===undefined?'—':String(p.text)];
  let s=roles?parts.map((c,i)=>'['+roles[i]+']\n'+c).join('\n\n'):parts[0];
  if(p.choices) s+='\n\n[choices scored by log-likelihood]\n'+p.choices.map(c=>JSON.stringify(c)).join('\n');
  return s;
}
rows.forEach(r=>{r._s=JSON.stringify(r.b).toLowerCase()+' '+String(r.id).toLowerCase();});
const $=id=>document.getElementById(id), list=$('sample-list'), count=$('sample-count');
const gsel=[...document.querySelectorAll('select[data-group]')];
function pass(r){
  for(const s of gsel){ if(s.value!=='' && String((r.g||{})[s.dataset.group])!==s.value) return false; }
  const o=$('f-outcome').value, f=$('f-failure').value, fl=$('f-flag').value, q=$('f-search').value.trim().toLowerCase();
  if(o!=='' && r.o!==o) return false;
  if(f==='__any' ? !r.f : (f!=='' && r.f!==f)) return false;
  if(f==='__none' && r.f) return false;
  if(fl!=='' && !(r.fl||[]).includes(fl)) return false;
  if(q && !r._s.includes(q)) return false;
  return true;
}
function node(tag,cls,text){const n=document.createElement(tag); if(cls) n.className=cls; if(text!==undefined) n.textContent=text; return n;}
function block(b){
  const d=node('div','blk'); d.appendChild(node('b','',b[0]));
  if(b[1]==='d'){ const p=node('pre','diff'); b[2].forEach((w,i)=>{ if(i) p.appendChild(document.createTextNode(' '));
      if(typeof w==='string') w=[w,'ok']; const s=node('span','w w-'+w[1],w[0]); s.title=w[1]; p.appendChild(s);}); d.appendChild(p); }
  else if(b[1]==='p') d.appendChild(node('pre','prompt',promptText(b[2])));
  else if(b[1]==='s'){ const g=node('div','pair'); b[2].forEach(c=>{ const x=node('div','side'); x.appendChild(node('b','',c[0]));
      x.appendChild(node('pre','',c[1]===null||c[1]===undefined?'—':String(c[1]))); g.appendChild(x); }); d.appendChild(g); }
  else if(b[1]==='j'){ const t=JSON.stringify(b[2]); d.appendChild(node('pre','',t.length<110?t:JSON.stringify(b[2],null,1))); }
  else d.appendChild(node('pre','',b[2]===null?'—':String(b[2])));
  return d;
}
function card(r){
  const d=node('details','sample'); d.dataset.id=r.id; d.dataset.repeat=(r.g||{}).repeat||''; const s=node('summary');
  s.appendChild(node('code','',r.id));
  for(const k in (r.g||{})) s.appendChild(node('span','badge',k+': '+r.g[k]));
  if(r.o) s.appendChild(node('span','badge b-'+r.o,r.o));
  if(r.f) s.appendChild(node('span','badge b-fail','failure: '+r.f));
  (r.fl||[]).forEach(f=>s.appendChild(node('span','badge',f)));
  d.appendChild(s); let built=false;
  d.addEventListener('toggle',()=>{ if(!built){ r.b.forEach(b=>d.appendChild(block(b))); built=true; } });
  return d;
}
function render(){
  list.textContent=''; const start=page*PAGE, part=shown.slice(start,start+PAGE);
  part.forEach(r=>list.appendChild(card(r)));
  count.textContent=shown.length+' of '+rows.length+' shown'; count.dataset.shown=shown.length;
  $('page-info').textContent=shown.length?('page '+(page+1)+' of '+Math.ceil(shown.length/PAGE)):'no sample matches';
  $('prev').disabled=page===0; $('next').disabled=start+PAGE>=shown.length;
}
function apply(){ shown=rows.filter(pass); page=0; render(); }
document.querySelectorAll('.filters select').forEach(s=>s.addEventListener('change',apply));
let t; $('f-search').addEventListener('input',()=>{clearTimeout(t); t=setTimeout(apply,150);});
$('prev').addEventListener('click',()=>{page--; render();}); $('next').addEventListener('click',()=>{page++; render();});
$('expand').addEventListener('click',()=>list.querySelectorAll('details').forEach(d=>d.open=true));
render();
})();
"""


def script_json(data: Any) -> str:
    """JSON safe inside a <script> element (no `</script>` or `<!--` can appear)."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(title: str, header_html: str, sections: Sequence[tuple[str, str, str]], *, script: str = "") -> str:
    """A whole self-contained page: sections are (anchor, heading, inner HTML)."""
    nav = "".join(f'<a href="#{a}">{escape(h)}</a>' for a, h, _ in sections)
    body = "".join(f'<section id="{a}"><h2>{escape(h)}</h2>{inner}</section>' for a, h, inner in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
            f"style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<header>{header_html}<nav>{nav}</nav></header><main>{body}</main>"
            f"{script}</body></html>")


def sample_browser(rows: list[dict[str, Any]], groups: dict[str, list[str]], failures: list[str],
                   flags: list[str], note: str = "", *, prompt_template: Any = None) -> tuple[str, str]:
    """The browser section's HTML and its script. Each row: id, g (group values), o (outcome), f
    (failure kind), fl (flags), b (blocks: [title, "t" text | "d" diff | "j" JSON | "p" prompt |
    "s" side by side ([[title, text], [title, text]]), content]). A "p" block holds a sample's prompt record (engine/prompts.py): a fill is joined
    with `prompt_template`, sent once, in the page."""
    def select(ident: str, label: str, options: list[tuple[str, str]], extra: str = "") -> str:
        opts = "".join(f'<option value="{escape(v)}">{escape(t)}</option>' for v, t in options)
        return f'<label>{escape(label)} <select id="{ident}"{extra}><option value="">all</option>{opts}</select></label>'

    parts = [select(f"f-group-{i}", k, [(v, v) for v in vals], f' data-group="{escape(k)}"')
             for i, (k, vals) in enumerate(groups.items())]
    outcomes = sorted({r["o"] for r in rows if r.get("o")})
    parts.append(select("f-outcome", "outcome", [(o, o) for o in outcomes]))
    parts.append(select("f-failure", "failure", [("__any", "any failure"), ("__none", "no failure")]
                        + [(f, f) for f in failures]))
    parts.append(select("f-flag", "flag", [(f, f) for f in flags]))
    parts.append('<input id="f-search" type="search" placeholder="search inputs and outputs">')
    legend = ('<p class="note legend">diff: <span class="w w-ok">right</span><span class="w w-tone">wrong tone'
              '</span><span class="w w-mark">other mark or case</span><span class="w w-missing">missing word</span>'
              '<span class="w w-extra">extra word</span></p>') if any(b[1] == "d" for r in rows[:200] for b in r["b"]) else ""
    html = (f'<p class="note">{escape(note)}</p>{legend}<div class="filters">{"".join(parts)}</div>'
            '<div class="pager"><button id="prev">‹ prev</button><span id="page-info"></span>'
            '<button id="next">next ›</button><span id="sample-count" class="note"></span>'
            '<button id="expand">expand page</button></div><div id="sample-list"></div>')
    tpl = (f'<script type="application/json" id="prompt-template">{script_json(prompt_template)}</script>'
           if prompt_template else "")
    script = (f'<script type="application/json" id="samples-data">{script_json(rows)}</script>{tpl}'
              f"<script>{BROWSER_JS}</script>")
    return html, script
