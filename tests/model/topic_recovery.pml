/*
 * zipc::Topic, multi-publisher mode: claiming log space, ordered commits,
 * reliable readers and the recovery of a dead publisher's claim, as a
 * Promela model for spin. docs/design/topic.md, "A machine-checked model",
 * says what is modelled and what is not; the code it follows is
 * src/topic/topic_publish.cpp (Publisher::reserve, await_token, finish),
 * src/topic/topic_state.hpp (write_commit_pair), src/topic/topic_subscribe.cpp
 * (probe_at, next_record, empty_or_closed, wait_readable),
 * src/topic/topic_recovery.cpp (take_recovery_lock, recover_claim,
 * recover_claims_locked, recover_frontier) and the publisher's detach
 * (src/topic/topic_publisher_attach.cpp).
 *
 * Positions count records: every message is one record of one unit, the
 * ring never wraps or fills (no padding, no make_room). One atomic
 * statement per load, store or CAS of a shared word; the plain stores of a
 * record header are one statement with the tag store that follows them
 * (nothing reads a header before its tag). A crash may happen before any
 * store or CAS of a participant: it marks the process dead and ends it.
 * Ghost variables (g_*) carry the properties.
 *
 * Switches (spin -D...):
 *   MSGS       messages per publisher (default 1)
 *   READERS    reliable readers, 1 or 2 (default 2)
 *   MAXCRASH   crashes in one run (default 1)
 *   EARLY      recoveries a waiter may start while nobody is stuck (the
 *              stall clock firing on a slow but live publisher), per run
 *              (default 1)
 *   GIVEUP     1: a publisher waiting for the commit token may give up and
 *              disown its claim (await_token's give-up time) (default 0)
 *   MUTATION   0 the protocol as written; 1 recovery takes the claim at the
 *              cursor without asking whether its owner is alive; 2 a
 *              publisher stores its intent after its tail CAS instead of
 *              before; 3 recovery keeps none of the records a dead
 *              publisher finished (the hole starts at the cursor); 4
 *              recover_claim does not re-read the cursor after its scan of
 *              the publisher slots (the library before the finding in
 *              docs/design/topic.md was fixed)
 */
#ifndef MSGS
#define MSGS 1
#endif
#ifndef READERS
#define READERS 2
#endif
#ifndef MAXCRASH
#define MAXCRASH 1
#endif
#ifndef EARLY
#define EARLY 1
#endif
#ifndef GIVEUP
#define GIVEUP 0
#endif
#ifndef MUTATION
#define MUTATION 0
#endif

#define NP 2                 /* publishers: processes 0, 1 (slot = process) */
#define NPROC (NP + READERS) /* readers: processes NP .. */
#define NMSG (NP * MSGS)
#define NPOS NMSG            /* positions 0 .. NPOS-1 can be claimed */
#define NONE 255             /* ~0: an intent of no claim, a spoiled tag */

/* record kinds (layout::RecordKind); 0: zeroed memory */
#define DATA 1
#define ABANDONED 3
#define ABORTED 4
#define KIND_OK(k) ((k) == DATA || (k) == ABANDONED || (k) == ABORTED)

/* ---- shared words of the segment */
byte tail;
byte cursor;
byte nextseq;                /* next_sequence */
byte version;                /* commit_version */
bit closed;
byte recovery_owner;         /* process + 1, 0: free */
byte abandoned_total;
byte intent[NP];             /* PublisherSlot.intent */
bit owner[NP];               /* PublisherSlot.owner != 0 (slots are never reused here) */
bit alive[NPROC];            /* is_alive_packed of each process */
/* the ring: a record header per position (tag = RecordHeader::position) */
byte tag[NPOS + 1];
byte kind[NPOS + 1];
byte hseq[NPOS + 1];
byte hlen[NPOS + 1];         /* record length in positions */
byte cell[NPOS + 1];         /* payload: message id, 0 garbage (never written) */

/* ---- ghosts */
bit committed[NMSG + 1];     /* its tag was stored: readers may deliver it */
byte pos_msg[NPOS + 1];      /* id committed at a position */
byte claim_pub[NPOS + 1];    /* publisher + 1 whose claim starts there */
bit finished[NPOS + 1];      /* its claimant stored its tag */
bit disowned[NPOS + 1];      /* its claimant gave it up (GIVEUP) */
bit holed[NPOS + 1];         /* covered by an abandoned record */
byte reads[READERS * (NMSG + 1)];
bit g_closed_ok[READERS];    /* the reader ended on `closed` */
byte g_exp[READERS];         /* ... and the sequence it expected next */
byte g_pub_done;             /* publishers ended (or dead) */
byte g_dead_claims;          /* publishers that died holding an unfinished claim */
byte crashes;
byte early;
bit g_stuck;                 /* a timeout fired and nothing has progressed since */

#define PROGRESS g_stuck = 0
#define READS(r, id) reads[(r) * (NMSG + 1) + (id)]

/* A crash before the store or CAS `s`, or `s` itself. `(1) ->` keeps an
 * `if` that `s` starts with from being merged into this selection, where
 * its `else` would mean "and no crash is possible" instead of "no other
 * guard of s holds". */
#define CRASHED \
  if \
  :: me < NP -> g_pub_done++; if :: claiming -> g_dead_claims++ :: else -> skip fi \
  :: else -> skip \
  fi
#define W(s) if :: atomic { crashes < MAXCRASH -> crashes++; alive[me] = 0; CRASHED; PROGRESS; goto dead } :: atomic { (1) -> s } fi

/* ---------------------------------------------------- write_commit_pair
 * (token_passes: the last version store is a CAS from our own odd value) */
inline write_commit_pair(newc, newn) {
  wv = version;
  W(wv = (wv + 1) | 1; version = wv);
  W(nextseq = newn);
  W(cursor = newc; PROGRESS);
  W(if :: version == wv -> version = wv + 1 :: else -> skip fi);
  wv = 0
}

/* ---------------------------------------------------------- recovery
 * recover_frontier -> recover_hole -> recover_claims_locked -> recover_claim.
 * Locals (declared by the caller): rc rt rat rend rk rin rnext rdone rq rhk
 * rhs rhl rholder wv; bits rmoved rlive rhalf rhole rgot. */
inline recover_claim() {
  rmoved = 0;
  rc = cursor;
  rt = tail;
  if
  :: (rc == rat && rt > rc) ->
    rend = rt;
    rlive = 0;
    rk = 0;
    do
    :: rk < NP ->
      if
      :: owner[rk] ->
        rin = intent[rk];
        if
        :: rin == rc -> rlive = rlive || alive[rk]
        :: (rin != rc && rin != NONE && rin > rc && rin < rend) -> rend = rin
        :: else -> skip
        fi
      :: else -> skip
      fi;
      rk++
    :: else -> break
    od;
#if MUTATION == 1
    rlive = 0;
#endif
#if MUTATION != 4
    if :: cursor != rc -> rlive = 1 :: else -> skip fi;   /* moved meanwhile: not ours to judge */
#endif
    if
    :: !rlive ->
      rnext = nextseq;
      rhalf = version & 1;
      rdone = rc;
#if MUTATION != 3
      do
      :: rdone < rend ->
        if
        :: tag[rdone] != rdone -> break
        :: else -> skip
        fi;
        atomic { rhk = kind[rdone]; rhs = hseq[rdone]; rhl = hlen[rdone] };  /* header_at: a private copy */
        if
        :: (!KIND_OK(rhk) || rhl == 0 || rhl > rend - rdone) -> break      /* check_record */
        :: else -> skip
        fi;
        if
        :: rhk == DATA ->
          if
          :: (rhalf && rhs < rnext && rnext - rhs <= rend - rc) -> rnext = rhs
          :: else -> skip
          fi;
          rhalf = 0;
          if
          :: rhs != rnext -> break
          :: else -> rnext++
          fi
        :: else -> skip
        fi;
        rdone = rdone + rhl
      :: else -> break
      od;
#endif
      rhole = (rdone < rend);
      if
      :: rhole ->
        W(kind[rdone] = ABANDONED; hseq[rdone] = 0; hlen[rdone] = rend - rdone; tag[rdone] = rdone;
          rq = rdone;
          do
          :: rq < rend ->
            assert(!finished[rq]);                    /* never over a record its claimant finished */
            assert(claim_pub[rq] == 0 || !alive[claim_pub[rq] - 1] || disowned[rq]);  /* nor a live claim */
            holed[rq] = 1;
            rq++
          :: else -> break
          od;
          PROGRESS);
        W(abandoned_total++)
      :: else -> skip
      fi;
      if
      :: rhole -> rdone = rend
      :: else -> skip
      fi;
      if
      :: rdone > rc -> write_commit_pair(rdone, rnext); rmoved = 1
      :: else -> skip
      fi
    :: else -> skip
    fi
  :: else -> skip
  fi
}

inline recover_hole(stalled) {
  /* take_recovery_lock */
  rgot = 0;
  W(if :: recovery_owner == 0 -> recovery_owner = me + 1; rgot = 1 :: else -> rholder = recovery_owner fi);
  if
  :: !rgot && rholder != me + 1 && !alive[rholder - 1] ->
    W(if :: recovery_owner == rholder -> recovery_owner = me + 1; rgot = 1 :: else -> skip fi)
  :: else -> skip
  fi;
  if
  :: rgot ->
    /* recover_claims_locked */
    rat = stalled;
    do
    :: true ->
      recover_claim();
      if
      :: !rmoved -> break
      :: else -> skip
      fi;
      rat = cursor;
      if
      :: rat >= tail -> break
      :: else -> skip
      fi
    od;
    W(recovery_owner = 0)
  :: else -> skip
  fi;
  /* (forget the locals: fewer distinct states) */
  atomic { rc = 0; rt = 0; rat = 0; rend = 0; rk = 0; rin = 0; rnext = 0; rdone = 0; rq = 0; rhk = 0; rhs = 0;
           rhl = 0; rholder = 0; rmoved = 0; rlive = 0; rhalf = 0; rhole = 0; rgot = 0 }
}

inline recover_frontier() {
  rfc = cursor;
  if
  :: tail > rfc -> recover_hole(rfc)
  :: else -> skip
  fi;
  rfc = 0
}

#define RECOVERY_LOCALS \
  byte rc, rt, rat, rend, rk, rin, rnext, rdone, rq, rhk, rhs, rhl, rholder, wv, rfc; \
  bit rmoved, rlive, rhalf, rhole, rgot

/* A waiter sleeps until its predicate holds; or the stall clock fires: when
 * the whole system is stuck (two such wake-ups in a row with no progress
 * between them: nobody can ever progress again), or up to EARLY times per
 * run at any moment (a live publisher that only looks stuck). */
inline stall_wait(pred) {
  if
  :: atomic { pred -> skip }
  :: atomic { timeout -> assert(!g_stuck); g_stuck = 1 }; recover_frontier()
  :: atomic { early < EARLY -> early++ }; recover_frontier()
  fi
}

/* -------------------------------------------------------------- publisher */

proctype Publisher(byte me) {
  byte m = 0;            /* messages done */
  byte id; byte p; byte c; byte t; byte s;
  bit ok; bit aborting; bit claiming = 0;
  RECOVERY_LOCALS;

  do
  :: m == MSGS -> break
  :: else ->
    atomic { id = me * MSGS + m + 1; aborting = 0 };
claim:
    /* reserve: p = tail (relaxed); intent, then the tail CAS */
    p = tail;
#if MUTATION != 2
    W(intent[me] = p);
#endif
    W(if :: tail == p -> tail = p + 1; ok = 1; claiming = 1; claim_pub[p] = me + 1; PROGRESS :: else -> ok = 0 fi);
    if
    :: !ok -> W(intent[me] = NONE); goto claim
    :: else -> skip
    fi;
#if MUTATION == 2
    W(intent[me] = p);
#endif
    /* spoil a tag that already reads as this record */
    t = tag[p];
    if
    :: t == p -> W(tag[p] = NONE)
    :: else -> skip
    fi;
    /* closed? (after the claim: Dekker with the reader's drained check) */
    if
    :: closed -> aborting = 1
    :: else -> W(cell[p] = id)   /* copy_in, after reserve returned */
    fi;
    /* finish: await_token */
token:
    c = cursor;
    if
    :: c == p -> skip
    :: else ->
      if
      :: stall_wait(cursor != c)
#if GIVEUP
      :: W(intent[me] = NONE; disowned[p] = 1; claiming = 0);   /* give-up time: disown the claim */
         m++;
         goto next
#endif
      fi;
      goto token
    fi;
    s = nextseq;
    /* the header, then the tag (release): the record is finished */
    W(if
      :: aborting -> kind[p] = ABORTED; hseq[p] = 0
      :: else -> kind[p] = DATA; hseq[p] = s; committed[id] = 1; pos_msg[p] = id
      fi;
      hlen[p] = 1; assert(!holed[p]); tag[p] = p; finished[p] = 1; claiming = 0; PROGRESS);
    if
    :: aborting -> write_commit_pair(p + 1, s); goto detach
    :: else -> write_commit_pair(p + 1, s + 1)
    fi;
    m++;
next:
    atomic { p = 0; c = 0; t = 0; s = 0; ok = 0 }
  od;
detach:
  /* ~Publisher: no claim, then the slot is free */
  W(intent[me] = NONE);
  W(owner[me] = 0);
  atomic { g_pub_done++; PROGRESS };
  goto end;
dead:
  skip;
end:
  skip
}

/* --------------------------------------------------------- reliable reader */

proctype Reader(byte me) {
  byte r = me - NP;
  byte pos = 0;          /* position_ */
  byte cur = 0;          /* cursor_ (cached) */
  byte exp = 0;          /* expected_ */
  byte fp;               /* the message found */
  byte tg, hk, hs, hl, id, t;
  bit claiming = 0;
  byte last[NP];         /* (ghost) last message number read per publisher, + 1 */
  RECOVERY_LOCALS;

read:
  /* ---- next_record */
  if
  :: pos >= cur ->
    /* probe_at: the tag, then a copy of the header */
    tg = tag[pos];
    if
    :: tg != pos -> goto nothing                        /* pending (never the every-64-polls cursor read) */
    :: else -> skip
    fi;
    atomic { tg = tag[pos]; hk = kind[pos]; hs = hseq[pos]; hl = hlen[pos] };
    if
    :: !KIND_OK(hk) -> goto nothing                     /* pending: zeroed memory */
    :: (tg == pos && hk == DATA && hl == 1 && hs == exp) -> fp = pos; goto deliver
    :: else -> skip                                   /* committed, not a message: go by the cursor */
    fi;
    cur = cursor;
    if
    :: pos >= cur -> goto nothing
    :: else -> skip
    fi
  :: else -> skip
  fi;
  /* below the cursor: every record is complete */
  atomic { tg = tag[pos]; hk = kind[pos]; hs = hseq[pos]; hl = hlen[pos] };
  assert(tg == pos && KIND_OK(hk) && hl >= 1 && hl <= cur - pos);   /* check_record: never corrupt */
  if
  :: hk == DATA -> assert(hs == exp); fp = pos; goto deliver    /* dense sequences */
  :: else -> pos = pos + hl; goto read                          /* a hole or an aborted claim: skipped */
  fi;

deliver:
  /* the payload copy; then position_ and expected_ */
  atomic {
    id = cell[fp];
    assert(id != 0 && committed[id] && pos_msg[fp] == id && !holed[fp]);  /* never garbage, uncommitted or a hole */
    READS(r, id)++;
    assert(READS(r, id) == 1);                                           /* never twice */
    assert(last[(id - 1) / MSGS] < (id - 1) % MSGS + 1);                 /* each publisher's messages in order */
    last[(id - 1) / MSGS] = (id - 1) % MSGS + 1;
    pos = fp + 1; exp++; fp = 0; id = 0; tg = 0; hk = 0; hs = 0; hl = 0;
    PROGRESS
  };
  goto read;

nothing:
  atomic { tg = 0; hk = 0; hs = 0; hl = 0 };
  /* empty_or_closed: closed, and nothing claimed past us */
  if
  :: closed ->
    t = tail;
    if
    :: t <= pos -> goto finish
    :: else -> t = 0
    fi
  :: else -> skip
  fi;
  /* wait_readable: a message at the tag, a committed record the cursor passed, or drained */
  stall_wait((tag[pos] == pos && KIND_OK(kind[pos]) &&
              ((kind[pos] == DATA && hseq[pos] == exp && hlen[pos] == 1) || cursor > pos)) ||
             (closed && tail <= pos));
  goto read;

finish:
  atomic { g_closed_ok[r] = 1; g_exp[r] = exp; PROGRESS };
  goto end;
dead:
  skip;
end:
  skip
}

/* ---------------------------------------------------------------- close() */
proctype Closer() {
  bit early_close;
  if :: early_close = 1 :: early_close = 0 fi;
  if
  :: early_close -> skip
  :: else -> g_pub_done == NP
  fi;
  atomic { closed = 1; PROGRESS }
}

init {
  byte k, r, n;
  atomic {
    k = 0;
    do
    :: k < NP -> owner[k] = 1; intent[k] = NONE; k++
    :: else -> break
    od;
    k = 0;
    do
    :: k < NPROC -> alive[k] = 1; k++
    :: else -> break
    od;
    run Publisher(0); run Publisher(1);
    k = NP;
    do
    :: k < NPROC -> run Reader(k); k++
    :: else -> break
    od;
    run Closer()
  };
  (_nr_pr == 1);
  /* ---- every run ends here: what holds after it */
  n = 0;
  k = 1;
  do
  :: k <= NMSG -> if :: committed[k] -> n++ :: else -> skip fi; k++
  :: else -> break
  od;
  r = 0;
  do
  :: r < READERS ->
    if
    :: g_closed_ok[r] ->
      assert(g_exp[r] == n);                                /* sequences 0 .. n-1, dense */
      k = 1;
      do
      :: k <= NMSG -> assert(READS(r, k) == committed[k]); k++   /* every committed message, once */
      :: else -> break
      od
    :: else -> skip
    fi;
    r++
  :: else -> break
  od;
  assert(abandoned_total <= g_dead_claims + GIVEUP * NMSG)  /* a hole per dead (or disowned) claim at most */
}
