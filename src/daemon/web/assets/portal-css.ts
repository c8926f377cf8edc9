/** The portal's one stylesheet: system fonts, light and dark, one column on a phone (dashboard, marketplace, creator, activity). */
export const PORTAL_CSS = String.raw`
:root{--bg:#f6f7f9;--card:#fff;--fg:#1b1f24;--muted:#5b6470;--line:#d9dde3;--accent:#2457c5;--accent-fg:#fff;--bar:#2f6fe0;--bar2:#9bb7ef;--bad:#b42318;--ok:#127a3a;--focus:#f5a524}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--card:#1a1f25;--fg:#e8ebef;--muted:#a3acb8;--line:#2e353e;--accent:#6d9bff;--accent-fg:#0b0e12;--bar:#6d9bff;--bar2:#3b5a9a;--bad:#ff8a7a;--ok:#6fd39a}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:var(--card);padding:.5rem}
.skip:focus{left:.5rem}
.top{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:.5rem 1rem;padding:.6rem 1rem;background:var(--card);border-bottom:1px solid var(--line)}
nav.site{flex:1;min-width:0}
nav.site ul{display:flex;flex-wrap:wrap;gap:.25rem .9rem;margin:0;padding:0;list-style:none}
nav.site a{text-decoration:none;padding:.2rem 0;border-bottom:2px solid transparent}
nav.site a[aria-current=page]{color:var(--fg);font-weight:600;border-bottom-color:var(--accent)}
.brand{font-weight:700;font-size:1.2rem;text-decoration:none;color:var(--fg)}
.who{display:flex;align-items:center;gap:.75rem;min-width:0}
.who .email{overflow:hidden;text-overflow:ellipsis;white-space:nowrap;color:var(--muted)}
main{max-width:1100px;margin:0 auto;padding:1rem}
main:focus{outline:none}
.foot{max-width:1100px;margin:0 auto;padding:1rem;color:var(--muted);font-size:.85rem}
h1{font-size:1.4rem;margin:.2rem 0 1rem}
h2{font-size:1.1rem;margin:0 0 .6rem}
h3{font-size:.95rem;margin:.8rem 0 .4rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,440px),1fr));gap:1rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;min-width:0}
.wide{grid-column:1/-1}
.toolbar{display:flex;flex-wrap:wrap;align-items:center;gap:.75rem;margin-bottom:1rem}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:.75rem;margin:0}
.stats div{border:1px solid var(--line);border-radius:8px;padding:.5rem .7rem}
.stats dt{color:var(--muted);font-size:.8rem}
.stats dd{margin:0;font-size:1.25rem;font-weight:600;font-variant-numeric:tabular-nums}
table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
th,td{text-align:left;padding:.35rem .4rem;border-bottom:1px solid var(--line);vertical-align:middle}
th{font-size:.8rem;color:var(--muted);font-weight:600}
td.num,th.num{text-align:right}
.scroll{overflow-x:auto}
.barcell{width:35%}
.hbar{display:block;height:.7rem;background:var(--bar);border-radius:3px;min-width:1px}
.chart{width:100%;height:auto;display:block}
.chart rect.b{fill:var(--bar)}
.chart rect.b:hover{fill:var(--bar2)}
.chart line{stroke:var(--line)}
.chart.stretch{height:140px}
.axis{display:flex;justify-content:space-between;gap:.5rem;font-size:.8rem}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}
input[type=text],input[type=search],input[type=email],input[type=password],select{font:inherit;padding:.5rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);width:100%;max-width:24rem}
select{width:auto}
button{font:inherit;padding:.45rem .9rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer}
button.secondary,button.danger{background:transparent;color:var(--accent)}
button.danger{border-color:var(--bad);color:var(--bad)}
button.link{border:none;background:none;color:var(--accent);padding:.2rem;text-decoration:underline}
button:disabled{opacity:.5;cursor:default}
form.inline{display:inline}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}
.row input{flex:1;min-width:10rem}
.login{max-width:24rem;margin:2rem auto}
.error{color:var(--bad);font-weight:600}
.note{color:var(--muted);font-size:.85rem}
.secret{display:block;word-break:break-all;padding:.6rem;border:1px dashed var(--accent);border-radius:6px;margin:.5rem 0;font-family:ui-monospace,Menlo,Consolas,monospace}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
meter{width:100%;height:.9rem}
.meter{margin:.4rem 0}
.meter .lbl{display:flex;justify-content:space-between;font-size:.85rem}
.tags{display:flex;flex-wrap:wrap;gap:.3rem;padding:0;margin:0;list-style:none}
.tags li{border:1px solid var(--line);border-radius:99px;padding:.05rem .55rem;font-size:.8rem}
.revoked{color:var(--muted);text-decoration:line-through}
input[type=number],input[type=datetime-local]{font:inherit;padding:.5rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);width:100%;max-width:14rem}
.limits{margin:.3rem 0}.limits>div{flex:1;min-width:9rem}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
h4{font-size:.9rem;margin:.8rem 0 .3rem}
.search{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:flex-end;margin-bottom:1rem}
.search .field label{margin-top:0}
.search .grow{flex:1 1 14rem}
.search .grow input{max-width:none}
.skills{list-style:none;padding:0;margin:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,320px),1fr));gap:1rem}
.skill{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem;min-width:0;overflow-wrap:anywhere}
.skill h2{margin:0 0 .3rem}
.skill p{margin:.3rem 0}
.meta{display:flex;flex-wrap:wrap;gap:.3rem .8rem;color:var(--muted);font-size:.85rem}
.tag,.status{display:inline-block;border:1px solid var(--line);border-radius:99px;padding:0 .5rem;font-size:.75rem;font-weight:500;color:var(--muted);vertical-align:middle}
.status.published{border-color:var(--ok);color:var(--ok)}
.status.archived{border-color:var(--bad);color:var(--bad)}
.tag.pre{border-style:dashed;color:var(--fg)}
td.actions form{display:inline-block;margin:.1rem .4rem .1rem 0}
.pager{display:flex;justify-content:space-between;align-items:center;gap:1rem;margin:1rem 0}
.crumbs{margin:0;font-size:.85rem;color:var(--muted)}
.lead{font-size:1.05rem;overflow-wrap:anywhere}
.banner{border:1px solid var(--bad);border-radius:8px;padding:.6rem .8rem;color:var(--bad)}
.facts{display:flex;flex-wrap:wrap;gap:.3rem 1.5rem;margin:.8rem 0}
.facts dt{color:var(--muted);font-size:.8rem}
.facts dd{margin:0}
main>.card,main>.stats{margin-bottom:1rem}
.cmd{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.cmd code{flex:1 1 12rem;padding:.5rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);overflow-wrap:anywhere}
.md{overflow-wrap:anywhere}
.md pre{overflow-x:auto;padding:.6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg)}
.md table{display:block;overflow-x:auto}
.md blockquote{margin:.5rem 0;padding-left:.8rem;border-left:3px solid var(--line);color:var(--muted)}
.versions{list-style:none;padding:0;margin:0}
.versions li{border-top:1px solid var(--line);padding:.4rem 0}
.versions .md li{border-top:0;padding:0}
.versions .md ul{list-style:disc}
.versions h3{margin:.2rem 0}
.notes{white-space:pre-wrap;overflow-wrap:anywhere}
.actions{margin:.6rem 0}
.big{font-size:3rem;margin:.5rem 0;color:var(--muted)}
[hidden]{display:none!important}
.status.ok{border-color:var(--ok);color:var(--ok)}
.status.bad{border-color:var(--bad);color:var(--bad)}
.chart.lines polyline{fill:none;stroke-width:2;vector-effect:non-scaling-stroke}
.chart polyline.s0{stroke:var(--bar)}
.chart polyline.s1{stroke:var(--bad)}
.chart circle.s0{fill:var(--bar)}
.chart circle.s1{fill:var(--bad)}
.key::before{content:"";display:inline-block;width:.9em;height:.3em;margin-right:.3em;vertical-align:middle;background:var(--bar)}
.key.s1::before{background:var(--bad)}
pre.body{white-space:pre-wrap;overflow-wrap:anywhere;max-height:30rem;overflow:auto;margin:0;padding:.6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);font:.8rem/1.4 ui-monospace,Menlo,Consolas,monospace}
.wrap{overflow-wrap:anywhere}
#calls td{white-space:nowrap}
#calls td.wrap{white-space:normal;min-width:8rem}
@media (max-width:560px){main{padding:.6rem}.card{padding:.75rem}.barcell{width:25%}.hide-sm{display:none}nav.site{order:3;flex-basis:100%}}
`;
