import zipc

topic = zipc.Topic.open_or_create("tour", capacity_bytes=1 << 20, max_message_size=1024)
pub = topic.publisher()
for word in ["one", "two", "three"]:
    pub.publish(word.encode(), timeout=1.0)  # raises zipc.Timeout if no room came in time
topic.close()  # subscribers read what is left, then their loop ends
