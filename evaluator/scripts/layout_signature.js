// Cheap fingerprint of the layout, polled until it stops changing (the "really rendered" wait).
() => {
  const d = document.documentElement, b = document.body;
  return [document.readyState, document.fonts ? document.fonts.status : '', d ? d.scrollWidth : 0, d ? d.scrollHeight : 0,
          document.getElementsByTagName('*').length, b ? b.innerText.length : 0].join('|');
}
