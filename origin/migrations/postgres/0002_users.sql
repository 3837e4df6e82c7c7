-- Users who can log in through the edge. Passwords are argon2id PHC strings; the
-- username is stored normalised to lowercase.
CREATE TABLE users (
    id            TEXT   PRIMARY KEY,
    username      TEXT   NOT NULL UNIQUE,
    password_hash TEXT   NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
