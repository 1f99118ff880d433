// The report page's inline style and script: plain CSS and a few dozen lines of vanilla JS
// (tooltips, a pinned trial per study, sortable tables), so the file opens offline in any browser
// for years without a build step or a vendored library.
#include "coordinator/report/html/html_report.h"

namespace sift::coordinator::html {

const char* PageStyle() {
  return R"css(
body{font:14px/1.4 system-ui,sans-serif;margin:0 24px 40px;color:#222;background:#fff}
h1{margin:16px 0 4px}h2{margin:28px 0 8px;border-bottom:1px solid #ddd}h2 small{color:#666;font-weight:normal}
.grid{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;border:1px solid #e3e3e3;border-radius:4px;padding:6px;background:#fcfcfc}
figcaption{font-weight:600;margin-bottom:4px;max-width:560px}
svg.chart{display:block;font-size:10px}svg text.label{font-size:11px;fill:#444}
.axis line{stroke:#999}.axis text{fill:#555}
circle[data-t]:hover,polyline[data-t]:hover,rect[data-t]:hover{stroke:#000;stroke-width:2;stroke-opacity:1}
circle.on{stroke:#000;stroke-width:1}
.note{color:#666;font-size:12px;max-width:560px;margin:4px 0}
pre.summary{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}
.detail{background:#fffbe6;border:1px solid #eed;padding:6px 8px;margin:8px 0;font-size:13px;min-height:1.4em}
.tablewrap{max-height:480px;overflow:auto;border:1px solid #ddd}
table{border-collapse:collapse;font-size:12px}th,td{padding:2px 6px;border-bottom:1px solid #eee;text-align:left;white-space:nowrap}
th{position:sticky;top:0;background:#f0f0f0;cursor:pointer}tr.on td:first-child{font-weight:bold}
tr.pinned td{background:#fff3b0}
p.more button{margin-left:8px}
#tip{position:absolute;display:none;pointer-events:none;background:#fff;border:1px solid #888;padding:6px 8px;font-size:12px;box-shadow:0 2px 6px rgba(0,0,0,.2);max-width:420px;z-index:9}
)css";
}

const char* PageScript() {
  return R"js(
window.onerror=function(m){document.body.setAttribute('data-js','error: '+m);};
(function(){
var tip=document.getElementById('tip'),D={};
function esc(s){return String(s).replace(/[&<>"]/g,function(c){return{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
function money(v){var a=Math.abs(v);return '$'+(a>=100?v.toFixed(0):a>=1?v.toFixed(2):String(Number(v.toPrecision(3))));}
function dur(s){return s<120?s.toFixed(0)+'s':s<7200?(s/60).toFixed(0)+'m':(s/3600).toFixed(1)+'h';}
// Row: [trial, state, epochs, objective, dollars, seconds, leases, redone, params, why, frontier].
function cell(r,i){var v=r[i];
  if(i===3)return typeof v==='number'?v.toFixed(4):v===null?'-':v;
  if(i===4)return money(v);if(i===5)return dur(v);if(i===7)return v>0?money(v):'';return String(v);}
function info(key,mark,sep){
  var p=key.split('-'),d=D[p[0]];if(!d)return '';var r=d.by[p[1]];if(!r)return '';var out=[];
  for(var i=0;i<d.columns.length;i++){var v=cell(r,i);if(v!=='')out.push('<b>'+esc(d.columns[i])+'</b> '+esc(v));}
  if(mark)out.push('<i>'+esc(mark)+'</i>');
  return out.join(sep||'<br>');
}
function render(s){
  var d=D[s],t=document.getElementById('trials-'+s),html=[],n=Math.min(d.limit,d.order.length);
  for(var k=0;k<n;k++){var r=d.order[k],cls=(r[10]?'on':'')+(s+'-'+r[0]===d.pinned?' pinned':'');
    html.push('<tr id="t'+s+'-'+r[0]+'" class="'+cls+'">');
    for(var i=0;i<d.columns.length;i++)html.push('<td>'+esc(cell(r,i))+'</td>');html.push('</tr>');}
  t.tBodies[0].innerHTML=html.join('');
  var more=document.getElementById('more-'+s);
  more.innerHTML=n<d.order.length?'showing '+n+' of '+d.order.length+' trials <button>show all</button>':'';
}
var blocks=document.querySelectorAll('script.trials');
for(var b=0;b<blocks.length;b++){
  var s=blocks[b].getAttribute('data-study'),d=JSON.parse(blocks[b].textContent);
  d.by={};d.order=d.rows.slice();d.limit=200;
  for(var k=0;k<d.rows.length;k++)d.by[d.rows[k][0]]=d.rows[k];
  D[s]=d;
  var head='<tr>';for(var i=0;i<d.columns.length;i++)head+='<th data-col="'+i+'">'+esc(d.columns[i])+'</th>';
  document.getElementById('trials-'+s).tHead.innerHTML=head+'</tr>';
  render(s);
}
function target(e){var n=e.target;return n&&n.getAttribute&&n.getAttribute('data-t')?n:null;}
document.addEventListener('mouseover',function(e){
  var n=target(e);if(!n){tip.style.display='none';return;}
  tip.innerHTML=info(n.getAttribute('data-t'),n.getAttribute('data-m'));
  tip.style.display='block';tip.style.left=(e.pageX+14)+'px';tip.style.top=(e.pageY+10)+'px';
});
function pin(key,mark){
  var s=key.split('-')[0],panel=document.getElementById('detail-'+s);
  if(panel)panel.innerHTML=info(key,mark,' &nbsp;&middot;&nbsp; ');
  if(!D[s])return;
  var old=document.getElementById('t'+D[s].pinned);if(old)old.className=old.className.replace(' pinned','');
  D[s].pinned=key;var row=document.getElementById('t'+key);if(row)row.className+=' pinned';
}
function sortBy(th){
  var s=th.closest('table').id.split('-')[1],d=D[s],col=+th.getAttribute('data-col');
  var dir=th.getAttribute('data-dir')==='asc'?-1:1;th.setAttribute('data-dir',dir>0?'asc':'desc');
  d.order.sort(function(a,b){var x=a[col],y=b[col];
    if(x===null||x===undefined)return y===null||y===undefined?0:1;if(y===null||y===undefined)return -1;
    if(typeof x!==typeof y)return typeof x==='number'?-1:1;return x<y?-dir:x>y?dir:0;});
  render(s);
}
document.addEventListener('click',function(e){
  var n=target(e);if(n){pin(n.getAttribute('data-t'),n.getAttribute('data-m'));return;}
  var th=e.target.closest&&e.target.closest('table.sortable th');if(th){sortBy(th);return;}
  var more=e.target.closest&&e.target.closest('p.more');
  if(more&&e.target.tagName==='BUTTON'){var s=more.id.split('-')[1];D[s].limit=Infinity;render(s);}
});
// Each study's panel starts on its best trial.
var panels=document.querySelectorAll('.detail[data-best]');
for(var i=0;i<panels.length;i++){var best=panels[i].getAttribute('data-best');if(best)pin(best,'best trial');}
var drawn=0,charts=document.querySelectorAll('svg.chart');
// Drawn: it holds a mark of a trial, a data line or a bar (axes and legends do not count).
for(var j=0;j<charts.length;j++){if(charts[j].querySelector('[data-t],.line,.bar'))drawn++;}
document.body.setAttribute('data-charts',charts.length+' '+drawn);
document.body.setAttribute('data-ready-ms',Math.round(performance.now()));
if(document.body.getAttribute('data-js')==='pending')document.body.setAttribute('data-js','ok');
setTimeout(function(){var p=performance.getEntriesByType('paint');for(var k=0;k<p.length;k++)document.body.setAttribute('data-'+p[k].name,Math.round(p[k].startTime));},0);
})();
)js";
}

}  // namespace sift::coordinator::html
