#!/usr/bin/env python3
# Writes packet.md (50 random fuzzy pairs of `warden diff v180 v1160 --json` > diff.json, seed
# 20261127, both sides' facts and lifted pseudo-C, the matcher's scores left out) and
# sample.json for the two-reviewer audit of docs/decisions/0080 (README.md).
import json, random, subprocess
import os, sys
# Run from a directory whose KB holds sql.js 1.8.0 as v180 and 1.16.0 as v1160 (see README.md).
W=os.environ.get('WARDEN', 'build/src/warden/cli/warden')
d=json.load(open('diff.json'))
fuzzy=[c for c in d['changes'] if c.get('pass')=='fuzzy']
fuzzy.sort(key=lambda c:(c['from_index'],c['to_index']))
rng=random.Random(20261127)
sample=rng.sample(fuzzy,50)
def show(ver, idx):
    out=subprocess.run([W,'show','--version',ver,str(idx),'--lift','--json'],capture_output=True,text=True).stdout
    try: j=json.loads(out)
    except Exception: return {'error':out[:200]}
    return j
parts=[]
meta=[]
for k,c in enumerate(sample,1):
    a=show('v180',c['from_index']); b=show('v1160',c['to_index'])
    def brief(j):
        j=dict(j)
        f=dict(j.get('function',{})); n=len(f.pop('instruction_mnemonics',[]) or []); f['instruction_count']=n; j['function']=f
        j['callers']=len(j.get('callers',[]) or []); j.pop('module',None); j.pop('index',None)
        lift=j.pop('lifted',None) or j.pop('lift',None) or j.pop('pseudo_c',None)
        s=json.dumps(j)[:1500]
        if isinstance(lift,str):
            lines=lift.splitlines()
            s+='\n--- lifted (first 60 lines of %d) ---\n'%len(lines)+'\n'.join(lines[:60])
        return s
    parts.append(f"## Pair {k}: sql.js 1.8.0 func[{c['from_index']}] vs 1.16.0 func[{c['to_index']}]\n\n### 1.8.0 func[{c['from_index']}]\n```\n{brief(a)}\n```\n\n### 1.16.0 func[{c['to_index']}]\n```\n{brief(b)}\n```\n")
    meta.append({'pair':k,'from_index':c['from_index'],'to_index':c['to_index'],'score':c['score']})
open('packet.md','w').write("# Audit packet: 50 random fuzzy pairs of `warden diff` sql.js 1.8.0 -> 1.16.0 (seed 20261127)\n\nThe matcher's scores are deliberately left out.\n\n"+'\n'.join(parts))
json.dump(meta,open('sample.json','w'),indent=1)
print(len(sample))
