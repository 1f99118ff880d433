// The report page's inline style and script: plain CSS and a few dozen lines of vanilla JS
// (tooltips, a pinned trial per study, sortable tables), so the file opens offline in any browser
// for years without a build step or a vendored library.
#include "coordinator/html_report.h"

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
#tip{position:absolute;display:none;pointer-events:none;background:#fff;border:1px solid #888;padding:6px 8px;font-size:12px;box-shadow:0 2px 6px rgba(0,0,0,.2);max-width:420px;z-index:9}
)css";
}

const char* PageScript() {
  return R"js(
window.onerror=function(m){document.body.setAttribute('data-js','error: '+m);};
(function(){
var tip=document.getElementById('tip');
function esc(s){return s.replace(/[&<>"]/g,function(c){return{'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c];});}
// A trial's facts are its table row: header name and cell text for each column.
function info(key,mark,sep){
  var row=document.getElementById('t'+key);if(!row)return '';
  var head=row.parentNode.parentNode.tHead.rows[0].cells,out=[];
  for(var i=0;i<row.cells.length;i++){var v=row.cells[i].textContent;if(v)out.push('<b>'+esc(head[i].textContent)+'</b> '+esc(v));}
  if(mark)out.push('<i>'+esc(mark)+'</i>');
  return out.join(sep||'<br>');
}
function target(e){var n=e.target;return n&&n.getAttribute&&n.getAttribute('data-t')?n:null;}
document.addEventListener('mouseover',function(e){
  var n=target(e);if(!n){tip.style.display='none';return;}
  tip.innerHTML=info(n.getAttribute('data-t'),n.getAttribute('data-m'));
  tip.style.display='block';tip.style.left=(e.pageX+14)+'px';tip.style.top=(e.pageY+10)+'px';
});
function pin(key,mark){
  var study=key.split('-')[0],panel=document.getElementById('detail-'+study);
  if(panel)panel.innerHTML=info(key,mark,' &nbsp;&middot;&nbsp; ');
  var old=document.querySelectorAll('tr.pinned');for(var i=0;i<old.length;i++)old[i].className=old[i].className.replace(' pinned','').replace('pinned','');
  var row=document.getElementById('t'+key);if(row)row.className+=' pinned';
}
document.addEventListener('click',function(e){
  var n=target(e);if(n){pin(n.getAttribute('data-t'),n.getAttribute('data-m'));return;}
  var th=e.target.closest&&e.target.closest('table.sortable th');if(th)sortBy(th);
});
function key(td){var v=td.getAttribute('data-v');if(v===null)v=td.textContent;var x=parseFloat(v);return v===''?null:(isNaN(x)?v:x);}
function sortBy(th){
  var table=th.closest('table'),body=table.tBodies[0],col=th.cellIndex;
  var dir=th.getAttribute('data-dir')==='asc'?-1:1;th.setAttribute('data-dir',dir>0?'asc':'desc');
  var rows=Array.prototype.slice.call(body.rows);
  var keys=new Map();rows.forEach(function(r){keys.set(r,key(r.cells[col]));});
  rows.sort(function(a,b){var x=keys.get(a),y=keys.get(b);
    if(x===null)return y===null?0:1;if(y===null)return -1;
    if(typeof x===typeof y)return x<y?-dir:x>y?dir:0;return typeof x==='number'?-1:1;});
  var frag=document.createDocumentFragment();rows.forEach(function(r){frag.appendChild(r);});body.appendChild(frag);
}
// Each study's panel starts on its best trial.
var panels=document.querySelectorAll('.detail[data-best]');
for(var i=0;i<panels.length;i++){var b=panels[i].getAttribute('data-best');if(b)pin(b,'best trial');}
var drawn=0,charts=document.querySelectorAll('svg.chart');
for(var j=0;j<charts.length;j++){if(charts[j].querySelector('circle,polyline,rect'))drawn++;}
document.body.setAttribute('data-charts',charts.length+' '+drawn);
document.body.setAttribute('data-ready-ms',Math.round(performance.now()));
if(document.body.getAttribute('data-js')==='pending')document.body.setAttribute('data-js','ok');
setTimeout(function(){var p=performance.getEntriesByType('paint');for(var k=0;k<p.length;k++)document.body.setAttribute('data-'+p[k].name,Math.round(p[k].startTime));},0);
})();
)js";
}

}  // namespace sift::coordinator::html
