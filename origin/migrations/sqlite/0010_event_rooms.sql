-- The waiting room of a drop an operator defined at run time: its settings and state
-- (`rules::drop::RoomSettings`, `RoomState`, as JSON), handed to the edge's room signed.
-- `version` grows with every setting, so the edge never takes an older one for a newer.
CREATE TABLE event_rooms (
    event_id   TEXT    PRIMARY KEY,
    settings   TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
